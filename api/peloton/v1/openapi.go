package pelotonv1

import _ "embed"

// OpenAPI is the OpenAPI (Swagger 2.0) document of the HTTP/JSON API,
// generated from the protobuf definitions and http.yaml by `make proto`.
//
//go:embed peloton.swagger.json
var OpenAPI []byte
