import { Marked } from 'marked';
import DOMPurify from 'dompurify';

const marked = new Marked({ gfm: true, breaks: false, async: false });

// Links open in a new tab and never carry the opener.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Markdown to safe HTML. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown || '') as string;
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
}
