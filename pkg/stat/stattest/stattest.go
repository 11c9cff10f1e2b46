// Package stattest holds the published JSON Schema of "docker cgpu stat --format json"
// (stat.schema.json) and checks documents against it, for the tests of every part that
// prints or reads the document.
package stattest

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is stat.schema.json.
//
//go:embed stat.schema.json
var Schema []byte

// Validate checks one JSON document against the schema, formats included.
func Validate(doc []byte) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return fmt.Errorf("stat.schema.json: %w", err)
	}
	if err := c.AddResource("stat.schema.json", s); err != nil {
		return err
	}
	sch, err := c.Compile("stat.schema.json")
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}
