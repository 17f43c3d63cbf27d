// proxy-from-env ships no types; this is the one function Hands uses.
declare module "proxy-from-env" {
  /** The proxy URL for `url` from *_PROXY / ALL_PROXY / NO_PROXY (either case), or "" for none. */
  export function getProxyForUrl(url: string): string;
}
