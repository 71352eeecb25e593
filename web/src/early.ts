import { Client } from "./api/client";
import { K } from "./api/kinds";
import { listAhead } from "./api/watch";
import { type Identity, storedToken, whoAmI } from "./auth/token";

// What the first page needs, asked for as the page starts rather than after the
// app's code has loaded and rendered. First the sign-in check of a stored token
// (the whole page waits for it, and the server's few I/O threads would answer it
// only after a 2.4 MB list sent before it); then, when the page is a namespace's
// Workloads (a bookmark, a reload), that view's code and its list. The view's
// watch takes the list (listAhead) and the session takes the check
// (takeEarlyCheck); the server checks the token on them as on any request.
//
// public/boot.js, the page's first script, has usually sent both requests already,
// before this code arrived: their answers are taken here, by URL, once.

interface Boot {
  token: string;
  started: Record<string, Promise<Response>>;
}

declare global {
  interface Window {
    __tesseraBoot?: Boot;
  }
}

// A fetch that answers a URL boot.js already asked for (with this token) with its
// answer, once, and fetches anything else.
export function bootFetch(token: string, boot: Boot | undefined): typeof fetch {
  return (input, init) => {
    const key = String(input);
    const started = boot?.token === token ? boot.started[key] : undefined;
    if (started) {
      delete boot!.started[key];
      return started;
    }
    return fetch(input, init);
  };
}

export const workloadsRoute = new RegExp(`^${import.meta.env.BASE_URL}ns/([^/]+)/workloads/?$`);

let started = false;
interface Check {
  token: string;
  identity: Promise<Identity>;
  answer?: Identity;
}
let check: Check | null = null;

export function startEarly(pathname: string) {
  if (started) return;
  started = true;
  const token = storedToken();
  if (!token) return;
  const client = new Client(() => token, "", bootFetch(token, typeof window === "undefined" ? undefined : window.__tesseraBoot));
  const identity = whoAmI(client);
  const mine: Check = (check = { token, identity });
  identity.then(
    (answer) => (mine.answer = answer),
    () => {},
  );
  const m = workloadsRoute.exec(pathname);
  if (!m) return;
  void import("./views/user/Workloads");
  listAhead(client, K.workloads, decodeURIComponent(m[1]));
}

// Settles when the early sign-in check has been answered (at once without one):
// main.tsx renders the app then, so that its first render already knows who is
// signed in (until then the session would render nothing anyway).
export function earlyCheckDone(): Promise<void> {
  const done = check?.identity.then(
    () => {},
    () => {},
  );
  return done ?? Promise.resolve();
}

// The early sign-in check, once, if it was for this token: the identity, when
// it has been answered, or the pending (or failed) check.
export function takeEarlyCheck(token: string): Check | undefined {
  const got = check;
  check = null;
  return got?.token === token ? got : undefined;
}
