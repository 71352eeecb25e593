// POST /apis/tessera.dev/v1/templates/NAME/render: a TemplateRender
// (api/validation.h ValidateTemplateRender) answered with the object the
// Template makes (api/templates.h) in status.object; nothing is stored. The
// caller creates that object next, with their own rights: `tessera run` and
// the portal do both steps.
#pragma once

#include "http/http_server.h"
#include "server/api/request_info.h"
#include "store/store.h"

namespace tessera {

HttpResponse AnswerTemplateRender(Store& store, const RequestInfo& request, const HttpRequest& http);

}  // namespace tessera
