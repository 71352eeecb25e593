// The definitions of each API group's kinds (api/kind_definition.h), one
// function per group, each in its own file of this directory. Only the
// registry (api/kinds.cc) and validation call these; everyone else looks kinds
// up through api/kinds.h and api/kind_definition.h.
//
// Thread-safety: each function builds fresh definitions; call once (the
// registry does, under its static initialisation).
#pragma once

#include <vector>

#include "api/kind_definition.h"
#include "api/schema.h"

namespace tessera {

std::vector<KindDefinition> CoreKinds();           // v1
std::vector<KindDefinition> BatchKinds();          // batch/v1
std::vector<KindDefinition> SchedulingKinds();     // scheduling.k8s.io/v1
std::vector<KindDefinition> RbacKinds();           // rbac.authorization.k8s.io/v1
std::vector<KindDefinition> AuthorizationKinds();  // authorization.k8s.io/v1, authentication.k8s.io/v1
std::vector<KindDefinition> NetworkingKinds();     // networking.k8s.io/v1
std::vector<KindDefinition> DiscoveryKinds();      // discovery.k8s.io/v1
std::vector<KindDefinition> CoordinationKinds();   // coordination.k8s.io/v1
std::vector<KindDefinition> KueueKinds();          // kueue.x-k8s.io/v1beta1
std::vector<KindDefinition> VolcanoKinds();        // batch.volcano.sh/v1alpha1
std::vector<KindDefinition> TesseraKinds();        // tessera.dev/v1
std::vector<KindDefinition> TesseraTrainingKinds();  // tessera.dev/v1 TrainingJob
std::vector<KindDefinition> TesseraPipelineKinds();  // tessera.dev/v1 Pipeline, PipelineRun
std::vector<KindDefinition> TesseraSweepKinds();   // tessera.dev/v1 Sweep
std::vector<KindDefinition> TesseraNotebookKinds();  // tessera.dev/v1 Notebook
std::vector<KindDefinition> TesseraTemplateKinds();  // tessera.dev/v1 Template
std::vector<KindDefinition> TesseraInferenceKinds();  // tessera.dev/v1 InferenceService

// authentication.k8s.io/v1 TokenRequest, the body of a POST to
// serviceaccounts/NAME/token: not a kind of its own (it is never stored nor
// served as a collection), so it has no definition; ValidateTokenRequest uses it.
schema::SchemaRef TokenRequestSchema();
// tessera.dev/v1 TemplateRender, the body of a POST to templates/NAME/render:
// likewise answered, never stored (ValidateTemplateRender).
schema::SchemaRef TemplateRenderSchema();

}  // namespace tessera
