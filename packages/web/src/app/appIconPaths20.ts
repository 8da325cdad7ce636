import type { IconName, IconPaths } from '@blueprintjs/icons';
import Add20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/add';
import AddToFolder20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/add-to-folder';
import Annotation20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/annotation';
import Archive20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/archive';
import ArrowDown20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/arrow-down';
import ArrowLeft20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/arrow-left';
import ArrowRight20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/arrow-right';
import ArrowUp20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/arrow-up';
import Blank20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/blank';
import Calendar20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/calendar';
import CaretDown20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/caret-down';
import CaretRight20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/caret-right';
import CaretUp20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/caret-up';
import Chat20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/chat';
import ChevronDown20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/chevron-down';
import ChevronLeft20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/chevron-left';
import ChevronRight20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/chevron-right';
import ChevronUp20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/chevron-up';
import Circle20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/circle';
import Clipboard20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/clipboard';
import CloudUpload20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/cloud-upload';
import ColumnLayout20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/column-layout';
import Comment20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/comment';
import Cross20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/cross';
import Disable20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/disable';
import Document20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/document';
import Dot20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/dot';
import DoubleCaretVertical20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/double-caret-vertical';
import Download20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/download';
import Draw20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/draw';
import Duplicate20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/duplicate';
import Edit20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/edit';
import Error20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/error';
import Export20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/export';
import EyeOff20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/eye-off';
import EyeOpen20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/eye-open';
import Filter20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/filter';
import FolderOpen20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/folder-open';
import Font20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/font';
import Hand20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/hand';
import Help20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/help';
import Home20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/home';
import Import20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/import';
import Inbox20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/inbox';
import InfoSign20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/info-sign';
import Key20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/key';
import KeyCommand20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/key-command';
import List20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/list';
import ListDetailView20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/list-detail-view';
import Lock20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/lock';
import LogIn20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/log-in';
import LogOut20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/log-out';
import Media20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/media';
import More20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/more';
import Move20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/move';
import NewPerson20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/new-person';
import ScatterPlot20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/scatter-plot';
import TakeAction20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/take-action';
import Person20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/person';
import Pause20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/pause';
import People20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/people';
import Play20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/play';
import Projects20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/projects';
import Properties20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/properties';
import Redo20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/redo';
import Refresh20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/refresh';
import Reset20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/reset';
import Search20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/search';
import Slash20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/slash';
import Stop20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/stop';
import SwapHorizontal20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/swap-horizontal';
import Tag20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/tag';
import Target20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/target';
import Th20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/th';
import ThDisconnect20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/th-disconnect';
import Tick20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/tick';
import TickCircle20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/tick-circle';
import Time20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/time';
import TimelineLineChart20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/timeline-line-chart';
import Trash20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/trash';
import Undo20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/undo';
import Unlock20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/unlock';
import Upload20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/upload';
import User20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/user';
import WarningSign20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/warning-sign';
import ZoomIn20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/zoom-in';
import ZoomOut20 from '@blueprintjs/icons/lib/esm/generated/20px/paths/zoom-out';

/** The 20 px paths of the icons in appIcons.ts (the same names; appIcons.test.ts checks it), loaded when one is drawn at 20 px or more. */
export const APP_ICON_PATHS_20 = {
  add: Add20,
  'add-to-folder': AddToFolder20,
  annotation: Annotation20,
  archive: Archive20,
  'arrow-down': ArrowDown20,
  'arrow-left': ArrowLeft20,
  'arrow-right': ArrowRight20,
  'arrow-up': ArrowUp20,
  blank: Blank20,
  calendar: Calendar20,
  'caret-down': CaretDown20,
  'caret-right': CaretRight20,
  'caret-up': CaretUp20,
  chat: Chat20,
  'chevron-down': ChevronDown20,
  'chevron-left': ChevronLeft20,
  'chevron-right': ChevronRight20,
  'chevron-up': ChevronUp20,
  circle: Circle20,
  clipboard: Clipboard20,
  'cloud-upload': CloudUpload20,
  'column-layout': ColumnLayout20,
  comment: Comment20,
  cross: Cross20,
  disable: Disable20,
  document: Document20,
  dot: Dot20,
  'double-caret-vertical': DoubleCaretVertical20,
  download: Download20,
  draw: Draw20,
  duplicate: Duplicate20,
  edit: Edit20,
  error: Error20,
  export: Export20,
  'eye-off': EyeOff20,
  'eye-open': EyeOpen20,
  filter: Filter20,
  'folder-open': FolderOpen20,
  font: Font20,
  hand: Hand20,
  help: Help20,
  home: Home20,
  import: Import20,
  inbox: Inbox20,
  'info-sign': InfoSign20,
  key: Key20,
  'key-command': KeyCommand20,
  list: List20,
  'list-detail-view': ListDetailView20,
  lock: Lock20,
  'log-in': LogIn20,
  'log-out': LogOut20,
  media: Media20,
  more: More20,
  move: Move20,
  'new-person': NewPerson20,
  'scatter-plot': ScatterPlot20,
  'take-action': TakeAction20,
  person: Person20,
  pause: Pause20,
  people: People20,
  play: Play20,
  projects: Projects20,
  properties: Properties20,
  redo: Redo20,
  refresh: Refresh20,
  reset: Reset20,
  search: Search20,
  slash: Slash20,
  stop: Stop20,
  'swap-horizontal': SwapHorizontal20,
  tag: Tag20,
  target: Target20,
  th: Th20,
  'th-disconnect': ThDisconnect20,
  tick: Tick20,
  'tick-circle': TickCircle20,
  time: Time20,
  'timeline-line-chart': TimelineLineChart20,
  trash: Trash20,
  undo: Undo20,
  unlock: Unlock20,
  upload: Upload20,
  user: User20,
  'warning-sign': WarningSign20,
  'zoom-in': ZoomIn20,
  'zoom-out': ZoomOut20,
} satisfies Partial<Record<IconName, IconPaths>>;
