import { Type } from 'typebox';

/**
 * What a URL the service stores for others to render may be (docs/objects.md, "Links others
 * render"): an object's image and a template's face are shown by the console, by explorers
 * and by customers' own pages, so a `javascript:` or an HTML `data:` link stored here would
 * run in whichever page follows it. Allowed: a relative reference, or one of the schemes
 * `http`, `https`, `ipfs`, `ipns`, `ar`, or `data:` of a raster image. Refused besides: any
 * control character (a browser drops tabs and newlines inside a scheme, so `java\tscript:`
 * would still be `javascript:`).
 *
 * A JSON Schema `pattern` (it has no flags, hence the letter classes), so the OpenAPI
 * description shows it and every validator that reads the schema applies the same rule.
 */
const CTL = '\\u0000-\\u001f\\u007f';
const TEXT = `[^${CTL}]*`;
const SCHEME_CHAR = 'A-Za-z0-9+.\\-';

export const LINK_URL_PATTERN =
  '^[ ]*(?:' +
  // No scheme: nothing before the first colon that a URL parser would read as one (written
  // without lookahead, which some schema tools cannot generate strings for).
  `|[^A-Za-z ${CTL}]${TEXT}` +
  `|[A-Za-z][${SCHEME_CHAR}]*(?:|[^${SCHEME_CHAR}:${CTL}]${TEXT})` +
  // The schemes allowed, in any case.
  `|(?:[Hh][Tt][Tt][Pp][Ss]?|[Ii][Pp][Ff][Ss]|[Ii][Pp][Nn][Ss]|[Aa][Rr]):${TEXT}` +
  `|[Dd][Aa][Tt][Aa]:[Ii][Mm][Aa][Gg][Ee]/(?:[Pp][Nn][Gg]|[Gg][Ii][Ff]|[Jj][Pp][Ee]?[Gg]|[Ww][Ee][Bb][Pp]|[Aa][Vv][Ii][Ff])[;,]${TEXT}` +
  ')$';

/** A link others render: at most 2,048 characters, of the form LINK_URL_PATTERN allows. */
export const LinkUrl = Type.String({
  maxLength: 2048,
  pattern: LINK_URL_PATTERN,
  description:
    'a relative reference or an http, https, ipfs, ipns, ar or data:image/(png|gif|jpeg|webp|avif) URL; no control characters',
});

/** The reason a refusal gives for a link LINK_URL_PATTERN does not allow (400 code 3). */
export const LINK_URL_REASON =
  'is not a link others may render: use a relative reference or an http, https, ipfs, ipns, ar or data:image URL, without control characters';

/** The reason for a failed `pattern`, when the pattern is the link rule; else null. */
export const linkUrlReason = (pattern: unknown): string | null =>
  pattern === LINK_URL_PATTERN ? LINK_URL_REASON : null;
