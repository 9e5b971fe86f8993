// A module of ctxsim's own whose path lies under Beam's Prism runner, so
// that Go lets it import Prism's internal packages (an import path inside
// .../runners/prism may import .../runners/prism/internal/...). It holds
// no Beam code: see doc.go and deploy/prism-job-service.md. The main
// module requires it through a replace directive pointing here.
module github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/ctxsimsvc

go 1.26

// The lowest Beam release whose Prism internals this package was checked
// against; the main module's go.mod chooses the release that is built.
require github.com/apache/beam/sdks/v2 v2.75.0
