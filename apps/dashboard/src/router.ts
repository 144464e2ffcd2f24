import { useEffect, useState } from 'preact/hooks';

/** Hash routes (`#/sessions/ses_…`): the server serves one index.html, the screen is picked here. */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const update = () => setParts(read());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return parts;
}

export const go = (path: string) => {
  location.hash = `#/${path}`;
};
