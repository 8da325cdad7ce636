import { describe, expect, it } from 'vitest';
import {
  afterPasswordChange,
  changePasswordUrlFor,
  DEFAULT_AFTER_LOGIN,
  loginUrlFor,
  safeRedirect,
} from './safeRedirect';

describe('safeRedirect', () => {
  it.each([
    ['/studies/3/cases', '/studies/3/cases'],
    ['/queries/images?studyId=4', '/queries/images?studyId=4'],
    ['/users/7/studyAccess#top', '/users/7/studyAccess#top'],
    ['/', '/'],
    ['  /reports  ', '/reports'],
  ])('follows the same-origin path %s', (raw, expected) => {
    expect(safeRedirect(raw)).toBe(expected);
  });

  it.each([
    [null],
    [undefined],
    [''],
    ['studies'],
    ['//evil.example.com/x'],
    ['/\\evil.example.com'],
    ['https://evil.example.com/studies'],
    ['javascript:alert(1)'],
    ['/studies\nSet-Cookie: x'],
    ['/login'],
    ['/login?redirect=/studies'],
  ])('falls back to /studies for %j', (raw) => {
    expect(safeRedirect(raw)).toBe(DEFAULT_AFTER_LOGIN);
  });

  it('normalises dot segments without leaving the origin', () => {
    expect(safeRedirect('/studies/../users')).toBe('/users');
    expect(safeRedirect('/../../etc')).toBe('/etc');
  });
});

describe('loginUrlFor', () => {
  it('encodes the path and query', () => {
    expect(loginUrlFor('/studies/3/cases?x=1&y=2')).toBe('/login?redirect=%2Fstudies%2F3%2Fcases%3Fx%3D1%26y%3D2');
  });

  it('round-trips through URLSearchParams and safeRedirect', () => {
    const url = new URL(loginUrlFor('/image-management/cases?page=2'), 'http://x');
    expect(safeRedirect(url.searchParams.get('redirect'))).toBe('/image-management/cases?page=2');
  });
});

describe('afterPasswordChange', () => {
  it('follows a safe redirect, else goes to /', () => {
    expect(afterPasswordChange('/studies/3/cases?x=1')).toBe('/studies/3/cases?x=1');
    expect(afterPasswordChange(null)).toBe('/');
    expect(afterPasswordChange('//evil.example.com')).toBe('/');
    expect(afterPasswordChange('https://evil.example.com/studies')).toBe('/');
  });

  it('never goes back to the change page itself', () => {
    expect(afterPasswordChange('/changePassword?redirect=%2Fusers')).toBe('/');
    expect(afterPasswordChange('/changePassword/')).toBe('/');
  });

  it('round-trips through changePasswordUrlFor', () => {
    const url = new URL(changePasswordUrlFor('/users/7/studyAccess?x=1'), 'http://x');
    expect(url.pathname).toBe('/changePassword');
    expect(afterPasswordChange(url.searchParams.get('redirect'))).toBe('/users/7/studyAccess?x=1');
  });
});
