import { afterEach, describe, expect, it } from 'vitest';
import { annotationKeyFor } from '../annotations/annotationRules';
import { keyBelongsToFocus } from '../../lib/typingTarget';
import { commandForKey, isHelpKey, layerToggleForKey, SHORTCUT_HELP } from './viewerShortcuts';

const key = (k: string, extra: Partial<KeyboardEvent> = {}) =>
  ({ key: k, target: document.body, ctrlKey: false, metaKey: false, altKey: false, ...extra }) as KeyboardEvent;

afterEach(() => {
  document.body.innerHTML = '';
});

describe('viewer keyboard shortcuts (doc 3 §2)', () => {
  it('arrows pan 80 px (the engine default), + = - zoom, c toggles the overlays', () => {
    expect(commandForKey(key('ArrowLeft'))).toEqual({ type: 'pan', direction: 'left' });
    expect(commandForKey(key('ArrowDown'))).toEqual({ type: 'pan', direction: 'down' });
    expect(commandForKey(key('+'))).toEqual({ type: 'zoomIn' });
    expect(commandForKey(key('='))).toEqual({ type: 'zoomIn' });
    expect(commandForKey(key('-'))).toEqual({ type: 'zoomOut' });
    expect(commandForKey(key('c'))).toEqual({ type: 'toggleOverlays' });
  });

  it('1 to 6 jump to 1.25x, 2.5x, 5x, 10x, 20x, 40x', () => {
    expect(['1', '2', '3', '4', '5', '6'].map((k) => commandForKey(key(k)))).toEqual(
      [1.25, 2.5, 5, 10, 20, 40].map((magnification) => ({ type: 'zoomToMagnification', magnification })),
    );
    expect(commandForKey(key('7'))).toBeNull();
  });

  it('a toggles the annotations and i the AI layers', () => {
    expect(layerToggleForKey(key('a'))).toBe('annotations');
    expect(layerToggleForKey(key('i'))).toBe('ai');
    expect(layerToggleForKey(key('x'))).toBeNull();
  });

  it('ignored while typing in an input, a textarea, a select or editable text, and with Ctrl/Cmd/Alt', () => {
    for (const tag of ['input', 'textarea', 'select']) {
      const field = document.createElement(tag);
      document.body.appendChild(field);
      expect(commandForKey(key('+', { target: field }))).toBeNull();
      expect(layerToggleForKey(key('a', { target: field }))).toBeNull();
      expect(isHelpKey(key('?', { target: field }))).toBe(false);
    }
    const editable = document.createElement('div');
    editable.contentEditable = 'true';
    Object.defineProperty(editable, 'isContentEditable', { value: true });
    expect(commandForKey(key('4', { target: editable }))).toBeNull();
    expect(commandForKey(key('+', { ctrlKey: true }))).toBeNull();
    expect(layerToggleForKey(key('a', { metaKey: true }))).toBeNull();
    expect(isHelpKey(key('?', { altKey: true }))).toBe(false);
    expect(isHelpKey(key('?'))).toBe(true);
  });

  it('the dialog lists every bound key', () => {
    const keys = SHORTCUT_HELP.map((s) => s.keys);
    for (const k of ['+ or =', '-', '1 – 6', 'c', 'a', 'i', 'r', 'l', 't', 'o', 'h', 'p', 'f', 'Esc', '?'])
      expect(keys).toContain(k);
  });

  it('r l t o h p f and Escape are the annotation tool keys (not while typing, nor with a modifier)', () => {
    expect(['r', 'l', 't', 'o', 'h', 'p', 'f', 'Escape'].map((k) => annotationKeyFor(key(k)))).toEqual([
      'r',
      'l',
      't',
      'o',
      'h',
      'p',
      'f',
      'Escape',
    ]);
    expect(annotationKeyFor(key('x'))).toBeNull();
    expect(annotationKeyFor(key('h', { ctrlKey: true }))).toBeNull();
    const field = document.createElement('input');
    document.body.appendChild(field);
    expect(annotationKeyFor(key('p', { target: field }))).toBeNull();
  });
});

describe('keys a control uses itself', () => {
  it('a focused slider, tab or radio keeps its arrows; a dialog keeps every key', () => {
    for (const role of ['slider', 'tab', 'radio', 'dialog']) {
      const host = document.createElement('div');
      host.setAttribute('role', role);
      const inner = document.createElement('span');
      host.appendChild(inner);
      document.body.appendChild(host);
      for (const target of [host, inner]) {
        expect(
          commandForKey({ key: 'ArrowRight', target, ctrlKey: false, metaKey: false, altKey: false }),
          role,
        ).toBeNull();
      }
      host.remove();
    }
    const dialog = document.createElement('div');
    dialog.setAttribute('role', 'dialog');
    const button = document.createElement('button');
    dialog.appendChild(button);
    document.body.appendChild(dialog);
    expect(commandForKey(key('4', { target: button }))).toBeNull();
    expect(layerToggleForKey(key('a', { target: button }))).toBeNull();
    expect(annotationKeyFor(key('l', { target: button }))).toBeNull();
    expect(annotationKeyFor(key('Escape', { target: button }))).toBeNull();
    expect(
      commandForKey({ key: 'ArrowRight', target: document.body, ctrlKey: false, metaKey: false, altKey: false }),
    ).toEqual({ type: 'pan', direction: 'right' });
  });

  it('work while a sidebar tab, a button or a checkbox has the focus (after a click there; issue 29, item 7)', () => {
    const tablist = document.createElement('div');
    tablist.setAttribute('role', 'tablist');
    const tab = document.createElement('div');
    tab.setAttribute('role', 'tab');
    tab.tabIndex = 0;
    tablist.appendChild(tab);
    const button = document.createElement('button');
    const checkbox = document.createElement('input');
    checkbox.type = 'checkbox';
    document.body.append(tablist, button, checkbox);
    for (const target of [tab, button, checkbox]) {
      const name = target.tagName + (target.getAttribute('role') ?? '');
      expect(annotationKeyFor(key('l', { target })), name).toBe('l');
      expect(annotationKeyFor(key('Escape', { target })), name).toBe('Escape');
      expect(commandForKey(key('4', { target })), name).toEqual({ type: 'zoomToMagnification', magnification: 10 });
      expect(commandForKey(key('+', { target })), name).toEqual({ type: 'zoomIn' });
      expect(layerToggleForKey(key('a', { target })), name).toBe('annotations');
      expect(isHelpKey(key('?', { target })), name).toBe(true);
      expect(keyBelongsToFocus(key('Enter', { target })), name).toBe(false);
    }
    // The tab's arrows move between tabs, the checkbox's Space ticks it.
    expect(commandForKey(key('ArrowLeft', { target: tab }))).toBeNull();
    expect(commandForKey(key('ArrowLeft', { target: button }))).toEqual({ type: 'pan', direction: 'left' });
    expect(keyBelongsToFocus(key(' ', { target: checkbox }))).toBe(true);
    expect(keyBelongsToFocus(key(' ', { target: button }))).toBe(false);
  });

  it('an open menu keeps its arrows, Enter and Escape; a text input keeps everything, a checkbox input does not', () => {
    const menu = document.createElement('ul');
    menu.setAttribute('role', 'menu');
    const item = document.createElement('li');
    item.setAttribute('role', 'menuitem');
    menu.appendChild(item);
    const text = document.createElement('input');
    text.type = 'search';
    document.body.append(menu, text);
    for (const k of ['ArrowDown', 'Enter', 'Escape', ' '])
      expect(keyBelongsToFocus(key(k, { target: item })), k).toBe(true);
    expect(annotationKeyFor(key('p', { target: item }))).toBe('p');
    expect(annotationKeyFor(key('p', { target: text }))).toBeNull();
    expect(keyBelongsToFocus(key('Enter', { target: text }))).toBe(true);
  });
});
