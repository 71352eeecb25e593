#!/usr/bin/env bash
# Fails when a layer includes a header of a layer it must not depend on:
#   common <- domain <- sched <- {server, sim}; store needs only common; api needs domain;
#   auth needs common, domain (label selectors) and api (the kinds' default role
#   grants, for the bootstrap roles); net (the nftables dataplane
#   compiler) needs common and domain only;
#   client (the HTTP client of the CLI and the agent) and http (the HTTP server of
#   the API server and the agent) need only common.
set -u
src=${1:?usage: layering_test.sh SRC_DIR}
fail=0
check() {  # layer, forbidden layers...
  local layer=$1; shift
  [ -d "$src/$layer" ] || return 0
  for bad in "$@"; do
    if grep -rnE "#include \"$bad/" "$src/$layer" >/dev/null; then
      echo "layering: src/$layer includes $bad/:"
      grep -rnE "#include \"$bad/" "$src/$layer"
      fail=1
    fi
  done
}
check common domain sched store api server agent sim cli
check domain sched store api server agent sim cli
check sched store api server agent sim cli
check store domain sched api server agent sim cli
check api sched store server agent sim cli
check sim store server agent cli
check auth sched store server agent sim cli client http
check client domain sched store api server agent sim cli
check http domain sched store api server agent sim cli client
check agent sched store server sim cli api
check net sched store api auth server agent sim cli client http
check pipeline sched store api server agent sim cli client http auth net
check sweep sched store api server agent sim cli client http auth net
echo "layering: $([ $fail -eq 0 ] && echo ok || echo BROKEN)"
exit $fail
