// Package deploy holds the checks of the AWS deployment's SAM template,
// deploy/aws/template.yaml (docs/aws.md is its guide). It has no code of
// its own: its tests read the template and fail when a function's role
// grants more than that function needs, when the table drifts from
// store/dynamo's TableDefinition, or when a piece the Lambda bootstrap
// relies on (a trigger, an environment variable, a queue's dead-letter
// queue, the schedule group and its role) is missing.
//
// The template is parsed as YAML nodes, CloudFormation's short tags (!Ref,
// !Sub, !GetAtt, ...) turned into their long forms, and each intrinsic
// rendered as a string ("${Table.Arn}") so that expected values read like
// the template. Every check is shown to fail on a template changed to break
// it (TestChecksCatch).
package deploy
