// Same-origin JSON calls. The numi_session cookie (set by /?token=…) rides along,
// so no token ever lives in script; a 401 means that cookie is gone (server restarted).

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `The server answered ${status}.`);
    this.status = status;
    this.code = err.code || "http_" + status;
    this.fields = err.fields || null;
    // A 409 conflict on a document names its latest version (docs/PROTOCOL.md "Documents").
    this.latestVersion = Number.isInteger(err.latest_version) ? err.latest_version : null;
  }
}

const listeners = new Set();
/** Called with every ApiError (main.js shows the signed-out screen on 401). */
export function onApiError(fn) { listeners.add(fn); }

export function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return answer(fetch(path, init));
}

/** The JSON of a fetch already under way (early.js starts some before this module loads). */
export async function answer(response) {
  let res;
  try {
    res = await response;
  } catch {
    const e = new ApiError(0, { error: { code: "offline", message: "Numi's backend is not answering. Is it still running?" } });
    listeners.forEach((fn) => fn(e));
    throw e;
  }
  if (res.status === 204) return null;
  let data = null;
  const text = await res.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const e = new ApiError(res.status, data);
    listeners.forEach((fn) => fn(e));
    throw e;
  }
  return data;
}

export const get = (p) => api("GET", p);
export const post = (p, b) => api("POST", p, b ?? {});
export const patch = (p, b) => api("PATCH", p, b);
export const put = (p, b) => api("PUT", p, b);
/** DELETE, with a JSON body where the route takes one (DELETE /api/approvals/rules). */
export const del = (p, b) => api("DELETE", p, b);
