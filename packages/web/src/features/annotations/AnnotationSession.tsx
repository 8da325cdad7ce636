import {
  hpfRadiusPx,
  isCeliacStudy,
  isNashStudy,
  VIEW_ANNOTATIONS_PERMISSIONS,
  hasAny,
  isWorkingAsSystemAdmin,
  readsAssignedCasesOnly,
  type StudyView,
} from '@lamina/domain';
import { createContext, useContext, useEffect, useMemo, type ReactNode } from 'react';
import { useUserInfo } from '../../api/users';
import { useStudy } from '../../api/studies';
import { useAiSession, type AiSession } from './aiSession';
import { useAnnotationList } from './api';
import { AnnotationHistory } from './annotationHistory';
import { annotationPermissions, studyClasses, type AnnotationPermissions, type StudyClasses } from './annotationRules';
import { AnnotationStore } from './annotationStore';

/** Everything the map's annotation tools and the Annotations tab share for one image. */
export interface AnnotationSession {
  imageId: number;
  store: AnnotationStore;
  /** The user's undo and redo of their changes on this image (issue 29), in memory. */
  history: AnnotationHistory;
  study: StudyView | undefined;
  classes: StudyClasses;
  celiac: boolean;
  nash: boolean;
  /** µm per pixel of the slide (null: not calibrated). */
  mpp: number | null;
  /** The HPF radius the server computes (doc 3 §9), for the cursor. */
  hpfRadius: number;
  permissions: AnnotationPermissions;
  userId: number | null;
  /** A central reader (sees only their own annotations: no reader filter). */
  reader: boolean;
  /** Working as system administrator: may delete annotations others drew (doc 3 §6). */
  systemAdmin: boolean;
  /** The list failed to load. */
  error: unknown;
  /** Whether the multiline tool applies: a celiac study with an enabled multiline class. */
  multilineAvailable: boolean;
  /** The image's imported AI annotations (issue 17); null when it has none. */
  ai: AiSession | null;
}

const AnnotationContext = createContext<AnnotationSession | null>(null);

export function useAnnotationSession(): AnnotationSession | null {
  return useContext(AnnotationContext);
}

interface ProviderProps {
  /** The image shown (null: none yet). */
  imageId: number | null;
  studyId: number | null;
  mpp: number | null;
  /** False holds the list, the AI layers and the study back (until the slide's first frame, issue 28). Default true. */
  load?: boolean;
  children: ReactNode;
}

/**
 * Loads the annotations of the image shown (when the user may see annotations) into a store made
 * for that image, and gives it to the map and the Annotations tab below.
 */
export function AnnotationProvider({ imageId, studyId, mpp, load = true, children }: ProviderProps) {
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const mayView = hasAny(actions, VIEW_ANNOTATIONS_PERMISSIONS);
  const list = useAnnotationList(mayView && load ? imageId : null);
  const ai = useAiSession(mayView && load ? imageId : null);
  const study = useStudy(mayView && load ? studyId : null);
  // One store per image: switching the case's image starts empty, never shows the last one's.
  const current = useMemo(() => (imageId === null ? null : new AnnotationStore(imageId)), [imageId]);
  // One history per image and user; forgotten once the annotations lock (the server refuses changes then).
  const userId = user?.id ?? null;
  const history = useMemo(() => (current && userId !== null ? new AnnotationHistory() : null), [current, userId]);
  useEffect(() => {
    if (!current || !history) return;
    const clearIfLocked = () => {
      if (current.snapshot.locked) history.clear();
    };
    clearIfLocked();
    return current.subscribe(clearIfLocked);
  }, [current, history]);
  const classes = useMemo(() => studyClasses(study.data), [study.data]);
  useEffect(() => {
    current?.setClasses(
      classes.hpf.map((c) => c.id),
      classes.point.map((c) => c.id),
    );
  }, [current, classes]);
  useEffect(() => {
    if (current && list.data && list.data.imageId === current.imageId) current.load(list.data);
  }, [current, list.data]);

  const session = useMemo((): AnnotationSession | null => {
    if (!current || !history || !mayView) return null;
    const indications = study.data?.indications ?? [];
    const celiac = isCeliacStudy(indications);
    const nash = isNashStudy(indications);
    return {
      imageId: current.imageId,
      store: current,
      history,
      study: study.data,
      classes,
      celiac,
      nash,
      mpp,
      hpfRadius: hpfRadiusPx(mpp, nash),
      permissions: annotationPermissions(actions),
      userId: user?.id ?? null,
      reader: readsAssignedCasesOnly(user?.workAsRole ?? null),
      systemAdmin: isWorkingAsSystemAdmin(user),
      error: list.error,
      multilineAvailable: celiac && classes.multiline.some((c) => c.enabled),
      ai,
    };
  }, [current, history, mayView, study.data, classes, mpp, actions, user, list.error, ai]);

  return <AnnotationContext.Provider value={session}>{children}</AnnotationContext.Provider>;
}
