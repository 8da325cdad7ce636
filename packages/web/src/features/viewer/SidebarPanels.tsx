import { NonIdealState } from '@blueprintjs/core';

/**
 * The Annotations tab (doc 3 §2): the annotation tree, celiac line measurements and the imported AI
 * tree fill it as those objects come to exist; until one does, it says there are none.
 */
export function AnnotationsPanel() {
  return (
    <NonIdealState
      icon="annotation"
      title="No annotations"
      description="Annotations drawn on this image are listed here by class, with their counts."
    />
  );
}

/** The Queries tab (doc 3 §2): the query panel of the image or case. */
export function QueriesPanel() {
  return (
    <NonIdealState
      icon="chat"
      title="No queries"
      description="Queries raised on this image or case are listed here with their comments."
    />
  );
}
