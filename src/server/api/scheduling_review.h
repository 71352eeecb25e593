// POST /apis/tessera.dev/v1/namespaces/NS/schedulingreviews: would this
// workload run now, where, or why would it wait? Answered, never stored, as
// kube-apiserver answers its reviews (docs/scheduling.md "Forecasts").
//
//   apiVersion: tessera.dev/v1
//   kind: SchedulingReview
//   spec:
//     object: {apiVersion: batch/v1, kind: Job, metadata: {name: train}, spec: ...}
//
// spec.object is checked as its own kind would be on create (field errors
// come back under spec.object.), takes the review's namespace, and goes to
// the scheduler (SchedulerLoop::Forecast); the answer is the review with its
// status (scheduling_forecast.h). Nothing is stored or reserved.
//
// Thread-safety: a pure function of its arguments; `forecaster` is called on
// the request's thread.
#pragma once

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "http/http_server.h"
#include "server/api/request_info.h"

namespace tessera {

using Forecaster = std::function<Result<nlohmann::json>(nlohmann::json object)>;

HttpResponse AnswerSchedulingReview(const Forecaster& forecaster, const RequestInfo& request,
                                    const HttpRequest& http, std::string_view now);

}  // namespace tessera
