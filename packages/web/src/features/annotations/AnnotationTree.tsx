import { Button, Checkbox, Menu, MenuItem, PopoverNext } from '@blueprintjs/core';
import {
  formatAreaUm2,
  formatLengthUm,
  hpfNodeLabel,
  treeCountsTsv,
  type AnnotationView,
  type HpfClassNode,
  type HpfNode,
} from '@lamina/domain';
import { useState, useSyncExternalStore, type ReactNode } from 'react';
import type { AnnotationStore, NodeRef } from './annotationStore';

/**
 * The tree rows of the Annotations tab (doc 3 §2): classes → HPFs → point classes with counts,
 * per-node visibility, hover highlight, copy of counts and the delete menus. The readers' tree and
 * the imported AI annotation tree (read-only: no delete menu) both draw with them.
 */

export function CopyButton({ text, label }: { text: () => string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      size="small"
      variant="minimal"
      icon={copied ? 'tick' : 'clipboard'}
      aria-label={label}
      title={`${label} (tab-separated, pastes into a spreadsheet)`}
      text={label === 'Copy counts' ? label : undefined}
      onClick={() => {
        void navigator.clipboard.writeText(text()).then(() => {
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        });
      }}
    />
  );
}

export interface NodeRowProps {
  store: AnnotationStore;
  node: NodeRef;
  name: string;
  count?: number;
  swatch?: string | null;
  /** Shown on hovering the name (an HPF's area and perimeter). */
  detail?: string | undefined;
  expanded?: boolean;
  onToggle?: () => void;
  actions?: ReactNode;
  children?: ReactNode;
}

/** One row of the tree: expand, visibility, colour, name and count, hover highlight, actions. */
export function NodeRow({
  store,
  node,
  name,
  count,
  swatch,
  detail,
  expanded,
  onToggle,
  actions,
  children,
}: NodeRowProps) {
  const hidden = useSyncExternalStore(store.subscribe, () => store.isHidden(node));
  return (
    <li role="treeitem" aria-expanded={onToggle ? !!expanded : undefined} aria-label={name}>
      <div
        className="lamina-tree-row"
        onMouseEnter={() => store.setHighlight(node)}
        onMouseLeave={() => store.setHighlight(null)}
      >
        {onToggle ? (
          <Button
            size="small"
            variant="minimal"
            icon={expanded ? 'caret-down' : 'caret-right'}
            aria-label={expanded ? `Collapse ${name}` : `Expand ${name}`}
            onClick={onToggle}
          />
        ) : (
          <span className="lamina-tree-indent" />
        )}
        <Checkbox
          className="lamina-tree-check"
          checked={!hidden}
          aria-label={`Show ${name}`}
          onChange={() => store.setHidden(node, !hidden)}
        />
        {swatch && <span className="lamina-class-swatch" style={{ background: swatch }} aria-hidden="true" />}
        <span className="lamina-tree-name" title={detail}>
          {name}
        </span>
        {count !== undefined && <span className="lamina-tree-count">{count}</span>}
        <span className="lamina-tree-actions">{actions}</span>
      </div>
      {expanded && children}
    </li>
  );
}

export interface TreeProps {
  store: AnnotationStore;
  mayDelete: (id: number) => boolean;
  onDelete: (id: number, deleteNested: boolean) => void;
}

/** A class opens by itself when it holds up to this many HPFs; beyond, on a click. */
const OPEN_CLASS_MAX_HPFS = 50;
/** HPF rows shown at once under an open class; more on 'Show more' (a slide may hold thousands). */
const HPF_ROWS_PAGE = 100;

export function ClassNode({ node, ...props }: TreeProps & { node: HpfClassNode }) {
  const [open, setOpen] = useState(node.hpfs.length <= OPEN_CLASS_MAX_HPFS);
  const [shown, setShown] = useState(HPF_ROWS_PAGE);
  const more = node.hpfs.length - shown;
  return (
    <NodeRow
      store={props.store}
      node={{ kind: 'hpfClass', classId: node.classId }}
      name={node.name}
      count={node.count}
      swatch={node.color}
      expanded={open}
      onToggle={() => setOpen(!open)}
      actions={
        <CopyButton
          text={() => treeCountsTsv(node.hpfs.map((h) => ({ name: hpfNodeLabel(h), count: h.count })))}
          label={`Copy counts of ${node.name}`}
        />
      }
    >
      <ul role="group">
        {node.hpfs.slice(0, shown).map((h) => (
          <HpfRow key={h.id} hpf={h} {...props} />
        ))}
        {more > 0 && (
          <li>
            <Button size="small" variant="minimal" onClick={() => setShown(shown + HPF_ROWS_PAGE)}>
              Show {Math.min(more, HPF_ROWS_PAGE)} more of {more}
            </Button>
          </li>
        )}
      </ul>
    </NodeRow>
  );
}

/** An HPF's area and perimeter as its row's hover text (issue 29 item 4), or nothing. */
export function hpfDetail(hpf: Pick<AnnotationView, 'area' | 'perimeter'> | undefined): string | undefined {
  if (hpf?.area == null) return undefined;
  return `${formatAreaUm2(hpf.area)}${hpf.perimeter === null ? '' : ` · ${formatLengthUm(hpf.perimeter)}`}`;
}

export function HpfRow({ hpf, store, mayDelete, onDelete }: TreeProps & { hpf: HpfNode }) {
  const [open, setOpen] = useState(false);
  const hpfId = hpf.id;
  // 'reader2 · HPF 1' in the all-readers view (issue 29 item 12), its swatch the reader's colour.
  const name = hpfNodeLabel(hpf);
  return (
    <NodeRow
      store={store}
      node={{ kind: 'hpf', hpfId: hpf.id }}
      name={name}
      count={hpf.count}
      swatch={hpf.color}
      detail={hpfId === null ? undefined : hpfDetail(store.get(hpfId))}
      expanded={open}
      onToggle={() => setOpen(!open)}
      actions={
        <>
          <CopyButton text={() => treeCountsTsv(hpf.points)} label={`Copy counts of ${name}`} />
          {hpfId !== null && mayDelete(hpfId) && (
            <PopoverNext
              placement="bottom-end"
              content={
                <Menu>
                  <MenuItem icon="trash" text="Delete HPF" onClick={() => onDelete(hpfId, false)} />
                  <MenuItem
                    icon="trash"
                    intent="danger"
                    text="Delete HPF and its points"
                    onClick={() => onDelete(hpfId, true)}
                  />
                </Menu>
              }
            >
              <Button size="small" variant="minimal" icon="more" aria-label={`Delete menu of ${name}`} />
            </PopoverNext>
          )}
        </>
      }
    >
      <ul role="group">
        {hpf.points.map((p) => (
          <NodeRow
            key={p.classId ?? 'other'}
            store={store}
            node={{ kind: 'points', hpfId: hpf.id, classId: p.classId }}
            name={p.name}
            count={p.count}
            swatch={p.color}
          />
        ))}
        {hpf.points.length === 0 && <li className="bp6-text-muted lamina-tree-empty">No points</li>}
      </ul>
    </NodeRow>
  );
}
