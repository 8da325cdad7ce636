/** Something that keeps a form from saving, and the field it points at. */
export interface SaveBlocker {
  key: string;
  /** The field's name as the form labels it. */
  label: string;
  /** `data-anchor` of the field's row: the link scrolls there and focuses its first input. */
  anchor: string;
}

/** The two reasons a form with reasons for change cannot save yet, in the words every such form uses. */
export function saveBlockerGroups(needAttention: readonly SaveBlocker[], needReason: readonly SaveBlocker[]) {
  return [
    { text: (n: number) => `${n} ${n === 1 ? 'field needs' : 'fields need'} attention`, items: needAttention },
    { text: (n: number) => `${n} ${n === 1 ? 'change needs' : 'changes need'} a reason`, items: needReason },
  ];
}

/** Scrolls to a form row (`data-anchor`) and focuses its first input. */
export function goToAnchor(anchor: string): void {
  const row = document.querySelector<HTMLElement>(`[data-anchor="${anchor}"]`);
  if (!row) return;
  row.scrollIntoView?.({ block: 'center', behavior: 'smooth' });
  row.querySelector<HTMLElement>('input, textarea, select, button')?.focus({ preventScroll: true });
}

/**
 * Beside a disabled Save: why it is disabled, e.g. '2 changes need a reason: Name, Indications',
 * each name a link to its field (issue 20). Forms with reasons for change (studies, cases, images)
 * use it; nothing shows when nothing blocks.
 */
export function SaveBlockers({
  groups,
  onGo,
}: {
  groups: readonly { text: (n: number) => string; items: readonly SaveBlocker[] }[];
  /** Called before scrolling, e.g. to show the field's messages. */
  onGo?: (blocker: SaveBlocker) => void;
}) {
  const shown = groups.filter((g) => g.items.length > 0);
  if (shown.length === 0) return null;
  return (
    <div className="lamina-save-blockers" role="status" aria-label="Why Save is disabled">
      {shown.map((group) => (
        <div key={group.text(group.items.length)}>
          {group.text(group.items.length)}:{' '}
          {group.items.map((item, i) => (
            <span key={item.key}>
              {i > 0 && ', '}
              <button
                type="button"
                className="lamina-link-button"
                onClick={() => {
                  onGo?.(item);
                  // After the messages render.
                  setTimeout(() => goToAnchor(item.anchor), 0);
                }}
              >
                {item.label}
              </button>
            </span>
          ))}
        </div>
      ))}
    </div>
  );
}
