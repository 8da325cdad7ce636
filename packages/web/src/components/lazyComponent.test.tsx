import { act, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { showToast } from './appToaster';
import { lazyComponent } from './lazyComponent';

// The app's one toaster lives outside the rendered tree: a real toast (role="alert") would outlive
// this file in a shared worker and be found by the next file's alert queries.
vi.mock('./appToaster', () => ({ showToast: vi.fn(() => Promise.resolve()) }));

function Greeting({ name }: { name: string }) {
  return <p>Hello {name}</p>;
}

/** A module load the test settles by hand. */
function controlledLoad() {
  const calls: { resolve: (c: typeof Greeting) => void; reject: (e: Error) => void }[] = [];
  const load = vi.fn(
    () =>
      new Promise<typeof Greeting>((resolve, reject) => {
        calls.push({ resolve, reject });
      }),
  );
  return { load, calls };
}

describe('lazyComponent (issue 28)', () => {
  it('loads its code when first rendered, renders nothing until then, and loads it once', async () => {
    const { load, calls } = controlledLoad();
    const LazyGreeting = lazyComponent('the greeting', load);
    expect(load).not.toHaveBeenCalled();
    const { unmount } = render(<LazyGreeting name="Ada" />);
    expect(load).toHaveBeenCalledTimes(1);
    expect(screen.queryByText(/Hello/)).toBeNull();
    await act(async () => calls[0]?.resolve(Greeting));
    expect(screen.getByText('Hello Ada')).toBeTruthy();
    unmount();
    // Rendered again (the dialog opened a second time): at once, no second load.
    render(<LazyGreeting name="Grace" />);
    expect(screen.getByText('Hello Grace')).toBeTruthy();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('says when its code could not load, and tries again when rendered again', async () => {
    const { load, calls } = controlledLoad();
    const LazyGreeting = lazyComponent('the greeting', load);
    const first = render(<LazyGreeting name="Ada" />);
    await act(async () => calls[0]?.reject(new Error('Failed to fetch dynamically imported module')));
    expect(showToast).toHaveBeenCalledWith(
      'Could not load the greeting: Failed to fetch dynamically imported module',
      'danger',
    );
    expect(screen.queryByText(/Hello/)).toBeNull();
    first.unmount();
    render(<LazyGreeting name="Ada" />);
    expect(load).toHaveBeenCalledTimes(2);
    await act(async () => calls[1]?.resolve(Greeting));
    expect(screen.getByText('Hello Ada')).toBeTruthy();
  });
});
