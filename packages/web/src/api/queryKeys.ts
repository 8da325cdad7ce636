export const queryKeys = {
  config: ['config'],
  userInfo: ['users', 'info'],
  availableRoles: ['users', 'availableRoles'],
} as const;
