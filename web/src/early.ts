import { Client } from "./api/client";
import { K } from "./api/kinds";
import { listAhead } from "./api/watch";
import { storedToken } from "./auth/session";

// What the first page needs, asked for as the app starts, before the sign-in check
// answers and the view's code arrives: opening a namespace's Workloads (a bookmark,
// a reload) loads the view and reads its list alongside them. The view's watch
// takes that list (listAhead); the server checks the token on it as on any request.
export function startEarly(pathname: string) {
  const m = new RegExp(`^${import.meta.env.BASE_URL}ns/([^/]+)/workloads/?$`).exec(pathname);
  if (!m) return;
  void import("./views/user/Workloads");
  const token = storedToken();
  if (token) listAhead(new Client(() => token), K.workloads, decodeURIComponent(m[1]));
}
