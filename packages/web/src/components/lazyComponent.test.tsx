import { act, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { lazyComponent } from './lazyComponent';

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
    expect(
      await screen.findByText('Could not load the greeting: Failed to fetch dynamically imported module'),
    ).toBeTruthy();
    first.unmount();
    render(<LazyGreeting name="Ada" />);
    expect(load).toHaveBeenCalledTimes(2);
    await act(async () => calls[1]?.resolve(Greeting));
    expect(screen.getByText('Hello Ada')).toBeTruthy();
  });
});
