import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { Client } from "../api/client";
import { takeEarlyCheck } from "../early";
import { type Identity, storedToken, TOKEN_KEY, whoAmI } from "./token";

// Who is signed in (the token and the check of it: ./token.ts).
export { type Identity, storedToken, whoAmI } from "./token";

export interface SessionValue {
  client: Client;
  identity: Identity | null;
  signIn: (token: string) => Promise<Identity>;
  signOut: (why?: string) => void;
  signedOutReason: string | null;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState<string | null>(storedToken);
  // The check src/early.ts sent as the page started: often answered already.
  const [early] = useState(() => (token ? takeEarlyCheck(token) : undefined));
  const [identity, setIdentity] = useState<Identity | null>(early?.answer ?? null);
  const [checking, setChecking] = useState(!!token && !identity);
  const [signedOutReason, setReason] = useState<string | null>(null);
  const tokenRef = useMemo(() => ({ current: token }), []); // eslint-disable-line react-hooks/exhaustive-deps
  tokenRef.current = token;
  const client = useMemo(() => new Client(() => tokenRef.current), [tokenRef]);

  const signOut = (why?: string) => {
    sessionStorage.removeItem(TOKEN_KEY);
    tokenRef.current = null;
    setToken(null);
    setIdentity(null);
    setReason(why ?? null);
  };
  // A 401 while signed in ends the session (revoked or expired token); a wrong
  // token on the sign-in page is only that form's error.
  client.onUnauthorized = (e) => {
    if (identity) signOut(`Signed out: ${e.message}`);
  };

  useEffect(() => {
    if (!token || identity) return;
    (early?.identity ?? whoAmI(client))
      .then(setIdentity)
      .catch(() => signOut("Your sign-in has expired: sign in again."))
      .finally(() => setChecking(false));
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  const signIn = async (t: string) => {
    tokenRef.current = t;
    try {
      const id = await whoAmI(client);
      sessionStorage.setItem(TOKEN_KEY, t);
      setToken(t);
      setIdentity(id);
      setReason(null);
      return id;
    } catch (e) {
      tokenRef.current = token;
      throw e;
    }
  };

  if (checking && !identity) return null;
  return (
    <SessionContext.Provider value={{ client, identity, signIn, signOut, signedOutReason }}>
      {children}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionValue {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside SessionProvider");
  return s;
}
