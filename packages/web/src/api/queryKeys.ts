export const queryKeys = {
  config: ['config'],
  userInfo: ['users', 'info'],
  availableRoles: ['users', 'availableRoles'],
} as const;

/** Query parameters of the lists (the keys include them). */
export interface ListParams {
  name?: string;
  /** Counts from 0 here; the server's `page` counts from 1. */
  pageIndex: number;
  pageSize: number;
  /** A sort key for ascending, `-key` for descending. */
  sort: string;
}
export type StudyListParams = ListParams;
export type UserListParams = ListParams;

/** Study queries: shared by the study pages and the study-access screens, so a change refreshes both. */
export const studyKeys = {
  all: ['studies'] as const,
  list: (params: StudyListParams) => ['studies', 'list', params] as const,
  detail: (id: number) => ['studies', 'detail', id] as const,
};

/** Users holding access to a study; under the study's key, so study-access changes refresh it. */
export const studyUsersKey = (studyId: number) => ['studies', studyId, 'users'] as const;

export const userKeys = {
  /** Every page of the users list (not the current user's info, which also starts with 'users'). */
  lists: ['users', 'list'] as const,
  list: (params: UserListParams) => ['users', 'list', params] as const,
  detail: (id: number) => ['users', 'detail', id] as const,
  studyAccess: (id: number) => ['users', 'studyAccess', id] as const,
  organizations: ['organizations'] as const,
  roles: ['permissions', 'roles'] as const,
};
