// Package deploy holds no code: it is where the files for running nextup
// live, and its test checks them.
//
//   - prometheus/prometheus.yml: a sample Prometheus configuration that
//     scrapes GET /metrics as job "nextup" and loads the rules.
//   - prometheus/alerts.yml: the alerting rules (dead letters, outbox
//     backlog and drain time, send failures, timer lateness, promotion
//     lag, 5xx, slow requests, an instance down).
//   - grafana/nextup.json: a Grafana dashboard of the same metrics.
//   - aws/template.yaml: the AWS deployment (README.md, "nextup on AWS
//     Lambda").
//
// docs/operations.md explains each alert and what to do about it.
//
// The test parses the rules with Prometheus's own rule parser and every
// expression of the rules and the dashboard with its PromQL parser, then
// checks each metric they select, and each label value they match on,
// against a scrape of the real server (web.Server over SQLite, with the
// metrics wired as `nextup serve` wires them), driven until every series
// the expressions select exists. A rule that names a metric nobody
// exports never fires, and nothing else would notice.
package deploy
