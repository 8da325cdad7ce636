import { Icons, IconSize, type IconName, type IconPaths } from '@blueprintjs/icons';
import Add16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/add';
import AddToFolder16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/add-to-folder';
import Annotation16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/annotation';
import Archive16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/archive';
import ArrowDown16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/arrow-down';
import ArrowLeft16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/arrow-left';
import ArrowRight16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/arrow-right';
import ArrowUp16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/arrow-up';
import Blank16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/blank';
import Calendar16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/calendar';
import CaretDown16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/caret-down';
import CaretRight16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/caret-right';
import CaretUp16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/caret-up';
import Chat16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/chat';
import ChevronDown16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/chevron-down';
import ChevronLeft16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/chevron-left';
import ChevronRight16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/chevron-right';
import ChevronUp16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/chevron-up';
import Circle16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/circle';
import Clipboard16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/clipboard';
import CloudUpload16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/cloud-upload';
import ColumnLayout16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/column-layout';
import Comment16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/comment';
import Cross16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/cross';
import Disable16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/disable';
import Document16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/document';
import Dot16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/dot';
import DoubleCaretVertical16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/double-caret-vertical';
import Download16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/download';
import Draw16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/draw';
import Duplicate16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/duplicate';
import Edit16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/edit';
import Error16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/error';
import Export16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/export';
import EyeOff16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/eye-off';
import EyeOpen16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/eye-open';
import Filter16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/filter';
import FolderOpen16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/folder-open';
import Font16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/font';
import Hand16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/hand';
import Help16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/help';
import Home16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/home';
import Import16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/import';
import Inbox16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/inbox';
import InfoSign16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/info-sign';
import Key16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/key';
import KeyCommand16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/key-command';
import List16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/list';
import ListDetailView16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/list-detail-view';
import Lock16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/lock';
import LogIn16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/log-in';
import LogOut16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/log-out';
import Media16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/media';
import More16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/more';
import Move16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/move';
import NewPerson16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/new-person';
import ScatterPlot16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/scatter-plot';
import TakeAction16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/take-action';
import Person16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/person';
import Pause16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/pause';
import People16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/people';
import Play16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/play';
import Projects16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/projects';
import Properties16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/properties';
import Redo16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/redo';
import Refresh16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/refresh';
import Reset16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/reset';
import Search16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/search';
import Slash16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/slash';
import Stop16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/stop';
import SwapHorizontal16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/swap-horizontal';
import Tag16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/tag';
import Target16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/target';
import Th16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/th';
import ThDisconnect16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/th-disconnect';
import Tick16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/tick';
import TickCircle16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/tick-circle';
import Time16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/time';
import TimelineLineChart16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/timeline-line-chart';
import Trash16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/trash';
import Undo16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/undo';
import Unlock16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/unlock';
import Upload16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/upload';
import User16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/user';
import WarningSign16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/warning-sign';
import ZoomIn16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/zoom-in';
import ZoomOut16 from '@blueprintjs/icons/lib/esm/generated/16px/paths/zoom-out';

/**
 * The Blueprint icons the app renders by name, with their 16 px paths: the one list of them
 * (issue 28). Blueprint's default loader fetches the paths of every icon it has (a ~150 KB chunk per
 * size) before it draws the first one; the app's loader answers these from the main bundle at once,
 * and their 20 px paths (NonIdealState's large icons) from a small chunk of their own
 * (appIconPaths20.ts, the same names). appIcons.test.ts finds every icon name the sources give
 * Blueprint and fails when this list and that set differ.
 */
export const APP_ICON_PATHS_16 = {
  add: Add16,
  'add-to-folder': AddToFolder16,
  annotation: Annotation16,
  archive: Archive16,
  'arrow-down': ArrowDown16,
  'arrow-left': ArrowLeft16,
  'arrow-right': ArrowRight16,
  'arrow-up': ArrowUp16,
  blank: Blank16,
  calendar: Calendar16,
  'caret-down': CaretDown16,
  'caret-right': CaretRight16,
  'caret-up': CaretUp16,
  chat: Chat16,
  'chevron-down': ChevronDown16,
  'chevron-left': ChevronLeft16,
  'chevron-right': ChevronRight16,
  'chevron-up': ChevronUp16,
  circle: Circle16,
  clipboard: Clipboard16,
  'cloud-upload': CloudUpload16,
  'column-layout': ColumnLayout16,
  comment: Comment16,
  cross: Cross16,
  disable: Disable16,
  document: Document16,
  dot: Dot16,
  'double-caret-vertical': DoubleCaretVertical16,
  download: Download16,
  draw: Draw16,
  duplicate: Duplicate16,
  edit: Edit16,
  error: Error16,
  export: Export16,
  'eye-off': EyeOff16,
  'eye-open': EyeOpen16,
  filter: Filter16,
  'folder-open': FolderOpen16,
  font: Font16,
  hand: Hand16,
  help: Help16,
  home: Home16,
  import: Import16,
  inbox: Inbox16,
  'info-sign': InfoSign16,
  key: Key16,
  'key-command': KeyCommand16,
  list: List16,
  'list-detail-view': ListDetailView16,
  lock: Lock16,
  'log-in': LogIn16,
  'log-out': LogOut16,
  media: Media16,
  more: More16,
  move: Move16,
  'new-person': NewPerson16,
  'scatter-plot': ScatterPlot16,
  'take-action': TakeAction16,
  person: Person16,
  pause: Pause16,
  people: People16,
  play: Play16,
  projects: Projects16,
  properties: Properties16,
  redo: Redo16,
  refresh: Refresh16,
  reset: Reset16,
  search: Search16,
  slash: Slash16,
  stop: Stop16,
  'swap-horizontal': SwapHorizontal16,
  tag: Tag16,
  target: Target16,
  th: Th16,
  'th-disconnect': ThDisconnect16,
  tick: Tick16,
  'tick-circle': TickCircle16,
  time: Time16,
  'timeline-line-chart': TimelineLineChart16,
  trash: Trash16,
  undo: Undo16,
  unlock: Unlock16,
  upload: Upload16,
  user: User16,
  'warning-sign': WarningSign16,
  'zoom-in': ZoomIn16,
  'zoom-out': ZoomOut16,
} satisfies Partial<Record<IconName, IconPaths>>;

export type AppIconName = keyof typeof APP_ICON_PATHS_16;

export const APP_ICONS = Object.keys(APP_ICON_PATHS_16) as AppIconName[];

function isAppIcon(name: string): name is AppIconName {
  return Object.hasOwn(APP_ICON_PATHS_16, name);
}

/** Blueprint's icon loader for the app: the listed icons without a request for the 16 px ones. */
export async function loadAppIcon(name: IconName, size: IconSize): Promise<IconPaths> {
  if (isAppIcon(name)) {
    if (size < IconSize.LARGE) return APP_ICON_PATHS_16[name];
    const { APP_ICON_PATHS_20 } = await import('./appIconPaths20');
    return APP_ICON_PATHS_20[name];
  }
  // Not listed (the test keeps this from happening): it still shows, through Blueprint's own
  // loader and its chunk of every path of that size.
  if (import.meta.env.DEV) console.warn(`Icon '${name}' is missing from src/app/appIcons.ts`);
  await Icons.load(name, size, { loader: 'split-by-size' });
  return Icons.getPaths(name, size) ?? [];
}

/**
 * Makes loadAppIcon Blueprint's loader and loads the listed 16 px paths (microtasks, no request),
 * so that the first render draws every icon instead of an empty frame first.
 */
export function installAppIcons(): Promise<void> {
  Icons.setLoaderOptions({ loader: loadAppIcon });
  return Icons.load(APP_ICONS, IconSize.STANDARD);
}
