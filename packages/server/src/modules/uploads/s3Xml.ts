/** The few S3 XML documents of the multipart protocol, written and read without an XML library. */

type Node = [string, string | Node[]];

function escape(text: string): string {
  return text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );
}

function render(nodes: Node[]): string {
  return nodes
    .map(([name, value]) => `<${name}>${typeof value === 'string' ? escape(value) : render(value)}</${name}>`)
    .join('');
}

export function xml(root: string, children: Node[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${render(children)}</${root}>`;
}

function unescape(text: string): string {
  return text.replace(
    /&(lt|gt|amp|apos|quot|#34|#39);/g,
    (_, e: string) => ({ lt: '<', gt: '>', amp: '&', apos: "'", quot: '"', '#34': '"', '#39': "'" })[e] ?? '',
  );
}

/** The parts of a `<CompleteMultipartUpload>` document, in document order. */
export function parseCompleteMultipartXml(text: string): { partNumber: number; etag: string }[] {
  const parts: { partNumber: number; etag: string }[] = [];
  for (const match of text.matchAll(/<Part>([\s\S]*?)<\/Part>/g)) {
    const body = match[1] ?? '';
    const number = /<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(body)?.[1];
    const etag = /<ETag>([\s\S]*?)<\/ETag>/.exec(body)?.[1];
    if (number === undefined || etag === undefined) continue;
    parts.push({ partNumber: Number(number), etag: unescape(etag.trim()).replace(/"/g, '') });
  }
  return parts;
}
