// The page's first script, plain and small, run before the app's half a megabyte
// of code has arrived: with a stored token it sends the sign-in check and, when
// the page is a namespace's Workloads, that list's request, at once. src/early.ts
// takes their answers (it asks for the same URLs; src/early.test.ts checks that);
// whatever it does not take is only a request made early for nothing.
(function () {
  var base = new URL(".", document.currentScript.src).pathname; // "/ui/"
  var token = null;
  try {
    token = sessionStorage.getItem("tessera.token");
  } catch (e) {}
  if (!token) return;
  var headers = { Accept: "application/json", Authorization: "Bearer " + token };
  var started = {};
  var review = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
  started[review] = fetch(review, {
    method: "POST",
    headers: Object.assign({ "Content-Type": "application/json" }, headers),
    body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
  });
  var m = new RegExp("^" + base + "ns/([^/]+)/workloads/?$").exec(location.pathname);
  if (m) {
    var list = "/apis/kueue.x-k8s.io/v1beta1/namespaces/" + m[1] + "/workloads";
    started[list] = fetch(list, { headers: headers });
  }
  for (var k in started) started[k].catch(function () {});
  window.__tesseraBoot = { token: token, started: started };
})();
