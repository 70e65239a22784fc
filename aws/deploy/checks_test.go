package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup/aws/store/dynamo"
)

// problems is what a check found wrong, one sentence each.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// A check reads the template (never changes it) and says what is wrong.
type check struct {
	name string
	run  func(tp *tmpl) problems
}

var checks = []check{
	{"header", checkHeader},
	{"references", checkReferences},
	{"roles", checkRoles},
	{"scheduler", checkScheduler},
	{"table", checkTable},
	{"functions", checkFunctions},
	{"triggers", checkTriggers},
	{"logs", checkLogs},
	{"budget", checkBudget},
	{"bucket", checkBucket},
	{"mail", checkMail},
	{"secret", checkSecret},
	{"outputs", checkOutputs},
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	tp := load(t)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, p := range c.run(tp) {
				t.Error(p)
			}
		})
	}
}

// The deployment's functions. Each has its own role, <Name>Role, and log
// group, <Name>LogGroup, where Name is the function's id without
// "Function".
const (
	apiFn      = "ApiFunction"
	timerFn    = "TimerFunction"
	sendFn     = "SendFunction"
	inboundFn  = "InboundMailFunction"
	feedbackFn = "MailFeedbackFunction"
)

var functions = []string{apiFn, timerFn, sendFn, inboundFn, feedbackFn}

func logGroupOf(fn string) string { return strings.TrimSuffix(fn, "Function") + "LogGroup" }

// Values as the template writes them (render).
const (
	arnPrefix       = "arn:${AWS::Partition}:"
	regionAcct      = "${AWS::Region}:${AWS::AccountId}:"
	tableArn        = "${Table.Arn}"
	indexArn        = "${Table.Arn}/index/*"
	secretArn       = "${Secrets}"
	schedulesArn    = arnPrefix + "scheduler:" + regionAcct + "schedule/${TimerScheduleGroup}/*"
	schedRoleArn    = "${SchedulerRole.Arn}"
	sendQueueArn    = "${SendQueue.Arn}"
	failedEventsArn = "${FailedEventsQueue.Arn}"
	timerArn        = arnPrefix + "lambda:" + regionAcct + "function:${AWS::StackName}-timer"
	mailDomain      = "${Fn::Select(1,${Fn::Split(@,${MailFrom})})}"
	inboundObjs     = "${MailBucket.Arn}/inbound/*"
)

var sesResources = []string{
	arnPrefix + "ses:" + regionAcct + "identity/" + mailDomain,
	arnPrefix + "ses:" + regionAcct + "identity/${MailFrom}",
	arnPrefix + "ses:" + regionAcct + "configuration-set/${MailConfigurationSet}",
}

// smsActions are the only actions that may have Resource "*": a text to
// a phone number has no resource ARN, so AWS authorizes sns:Publish to a
// number, and the opt-out check, on "*". Everything else names its
// resource.
var smsActions = map[string]bool{"sns:Publish": true, "sns:CheckIfPhoneNumberIsOptedOut": true}

// wantEnv is every function's environment (aws/cmd/lambda reads it).
var wantEnv = map[string]string{
	"NEXTUP_DB":                     "dynamodb:///${TablePrefix}?region=${AWS::Region}",
	"NEXTUP_BASE_URL":               "${BaseURL}",
	"NEXTUP_SECRETS_ARN":            secretArn,
	"NEXTUP_SCHEDULE_GROUP":         "${TimerScheduleGroup}",
	"NEXTUP_SCHEDULE_ROLE_ARN":      schedRoleArn,
	"NEXTUP_SCHEDULE_TARGET_ARN":    timerArn,
	"NEXTUP_SCHEDULE_DLQ_ARN":       "${ScheduleDLQ.Arn}",
	"NEXTUP_SEND_QUEUE_URL":         "${SendQueue}",
	"NEXTUP_MAIL_FROM":              "${MailFrom}",
	"NEXTUP_SES_CONFIGURATION_SET":  "${MailConfigurationSet}",
	"NEXTUP_SMS_SENDER_ID":          "${SMSSenderID}",
	"NEXTUP_SMS_ORIGINATION_NUMBER": "${SMSOriginationNumber}",
	"NEXTUP_INBOUND_DOMAIN":         "${InboundDomain}",
}

// notAtRunTime are the store's DynamoDB calls (dynamo.API) that no
// function makes, and why. Every other method of dynamo.API must be
// granted: a call the store starts making is a test failure here until
// the template grants it.
var notAtRunTime = map[string]string{
	"CreateTable":        "Migrate; the template owns the table",
	"DescribeTimeToLive": "Migrate",
	"UpdateTimeToLive":   "Migrate",
	"Scan":               "tests only",
	"DescribeTable":      "Migrate, and Store.Ping (GET /readyz), which only ApiFunction serves",
}

// tableActions are the item calls every function makes on the table: the
// methods of dynamo.API the store calls at run time, and ConditionCheckItem
// (a TransactWriteItems's ConditionCheck parts, Tx's row locks, are
// authorized as that action). Query is apart: it also reads the indexes.
func tableActions() []string {
	api := reflect.TypeFor[dynamo.API]()
	out := []string{"dynamodb:ConditionCheckItem"}
	for i := range api.NumMethod() {
		name := api.Method(i).Name
		if _, skip := notAtRunTime[name]; !skip && name != "Query" {
			out = append(out, "dynamodb:"+name)
		}
	}
	return out
}

// grants is action → resources, as the template renders them.
type grants map[string]map[string]bool

func (g grants) add(resources []string, actions ...string) {
	for _, a := range actions {
		if g[a] == nil {
			g[a] = map[string]bool{}
		}
		for _, r := range resources {
			g[a][r] = true
		}
	}
}

// wantGrants is what fn's role must grant, no more and no less.
func wantGrants(fn string) grants {
	g := grants{}
	g.add([]string{tableArn}, tableActions()...)
	g.add([]string{tableArn, indexArn}, "dynamodb:Query")
	g.add([]string{secretArn}, "secretsmanager:GetSecretValue")
	g.add([]string{schedulesArn}, "scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule")
	g.add([]string{schedRoleArn}, "iam:PassRole")
	g.add([]string{sendQueueArn}, "sqs:SendMessage")
	g.add([]string{"${" + logGroupOf(fn) + ".Arn}"}, "logs:CreateLogStream", "logs:PutLogEvents")
	sends := func() {
		g.add(sesResources, "ses:SendEmail", "ses:SendRawEmail")
		g.add([]string{"*"}, "sns:Publish", "sns:CheckIfPhoneNumberIsOptedOut")
	}
	switch fn {
	case apiFn:
		g.add([]string{tableArn}, "dynamodb:DescribeTable")
	case timerFn:
		sends() // the sweep sends due messages whose SQS record was lost
	case sendFn:
		sends()
		g.add([]string{sendQueueArn}, "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
	case inboundFn:
		g.add([]string{inboundObjs}, "s3:GetObject")
		g.add([]string{failedEventsArn}, "sqs:SendMessage") // its on-failure destination
	case feedbackFn:
		g.add([]string{failedEventsArn}, "sqs:SendMessage") // its on-failure destination
	}
	return g
}

func TestNotAtRunTimeIsCurrent(t *testing.T) {
	t.Parallel()
	api := reflect.TypeFor[dynamo.API]()
	for name := range notAtRunTime {
		if _, ok := api.MethodByName(name); !ok {
			t.Errorf("notAtRunTime names %s, which dynamo.API no longer has", name)
		}
	}
}

func checkHeader(tp *tmpl) (p problems) {
	if got := render(tp.root["Transform"]); got != "AWS::Serverless-2016-10-31" {
		p.add("Transform is %q, not AWS::Serverless-2016-10-31", got)
	}
	if got := render(tp.root["AWSTemplateFormatVersion"]); got != "2010-09-09" {
		p.add("AWSTemplateFormatVersion is %q", got)
	}
	return p
}

// checkReferences: every Ref, GetAtt and ${} names a parameter, a
// pseudo parameter, a resource or what SAM makes of one; every
// DependsOn and Condition exists.
func checkReferences(tp *tmpl) (p problems) {
	known := map[string]bool{"AWS::AccountId": true, "AWS::Region": true, "AWS::Partition": true,
		"AWS::StackName": true, "AWS::StackId": true, "AWS::URLSuffix": true, "AWS::NoValue": true, "AWS::NotificationARNs": true}
	params, _ := tp.root["Parameters"].(map[string]any)
	for name := range params {
		known[name] = true
	}
	for id := range tp.resources() {
		known[id] = true
		if typ, props := tp.resource(id); typ == "AWS::Serverless::Function" && props["FunctionUrlConfig"] != nil {
			known[id+"Url"] = true // SAM's AWS::Lambda::Url
		}
	}
	conds, _ := tp.root["Conditions"].(map[string]any)
	for _, part := range []string{"Globals", "Resources", "Outputs", "Conditions"} {
		for _, r := range refs(tp.root[part]) {
			if !known[r] {
				p.add("%s refers to %s, which is no parameter or resource", part, r)
			}
		}
	}
	for id, r := range tp.resources() {
		for _, d := range list(at(r, "DependsOn")) {
			if tp.resources()[render(d)] == nil {
				p.add("%s depends on %s, which is no resource", id, render(d))
			}
		}
		if c := at(r, "Condition"); c != nil && conds[render(c)] == nil {
			p.add("%s has condition %s, which is not defined", id, render(c))
		}
	}
	return p
}

// statement is one IAM statement and where it is written.
type statement struct {
	from string
	m    map[string]any
}

func docStatements(from string, doc any) []statement {
	var out []statement
	for i, s := range list(at(doc, "Statement")) {
		m, _ := s.(map[string]any)
		out = append(out, statement{from: fmt.Sprintf("%s statement %d (%s)", from, i, render(m["Sid"])), m: m})
	}
	return out
}

// refTo is the logical id v is a Ref to.
func refTo(v any) (string, bool) {
	m, _ := v.(map[string]any)
	id, ok := m["Ref"].(string)
	return id, ok && len(m) == 1
}

// roleStatements gathers every statement that applies to role: its
// inline policies, the template's managed policies it lists, and the
// template's policies that name it. A managed policy from outside the
// template cannot be read here, and so is a problem.
func (tp *tmpl) roleStatements(role string) (out []statement, p problems) {
	_, props := tp.resource(role)
	for i, pol := range list(props["Policies"]) {
		out = append(out, docStatements(fmt.Sprintf("%s policy %d", role, i), at(pol, "PolicyDocument"))...)
	}
	for _, arn := range list(props["ManagedPolicyArns"]) {
		id, ok := refTo(arn)
		typ, pp := tp.resource(id)
		if !ok || typ != "AWS::IAM::ManagedPolicy" {
			p.add("%s: managed policy %s is not one of this template's, so it cannot be checked", role, render(arn))
			continue
		}
		if slices.Contains(strs(pp["Roles"]), "${"+role+"}") {
			continue // gathered below, by the policy's Roles
		}
		out = append(out, docStatements(id, pp["PolicyDocument"])...)
	}
	if props["PermissionsBoundary"] != nil {
		p.add("%s: a permissions boundary is not checked here", role)
	}
	for id := range tp.resources() {
		typ, pp := tp.resource(id)
		names := false
		switch typ {
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			for _, r := range list(pp["Roles"]) {
				names = names || render(r) == "${"+role+"}"
			}
		case "AWS::IAM::RolePolicy":
			names = render(pp["RoleName"]) == "${"+role+"}"
		}
		if names {
			out = append(out, docStatements(id, pp["PolicyDocument"])...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out, p
}

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, render(e))
	}
	return out
}

// leastPrivilege holds for each statement that grants: no NotAction or
// NotResource, no wildcard in an action (no "*", no "dynamodb:*", no
// "s3:Get*"), a wildcard in a resource only at its end (".../index/*",
// a log group's ":*"), Resource "*" only for the SMS actions, and
// iam:PassRole only to the service named in its condition.
func leastPrivilege(sts []statement) (p problems) {
	for _, s := range sts {
		switch render(s.m["Effect"]) {
		case "Deny":
			continue // takes away, never grants
		case "Allow":
		default:
			p.add("%s: Effect %q", s.from, render(s.m["Effect"]))
			continue
		}
		if s.m["NotAction"] != nil || s.m["NotResource"] != nil {
			p.add("%s: grants by exclusion (NotAction/NotResource)", s.from)
		}
		actions, resources := strs(s.m["Action"]), strs(s.m["Resource"])
		if len(actions) == 0 || len(resources) == 0 {
			p.add("%s: no Action or no Resource", s.from)
		}
		for _, a := range actions {
			if strings.ContainsAny(a, "*?") {
				p.add("%s: action %q is a wildcard", s.from, a)
			} else if !strings.Contains(a, ":") {
				p.add("%s: action %q names no service", s.from, a)
			}
			if a == "iam:PassRole" && render(at(s.m, "Condition.StringEquals.iam:PassedToService")) == "" {
				p.add("%s: iam:PassRole without an iam:PassedToService condition", s.from)
			}
		}
		for _, r := range resources {
			if r == "*" {
				for _, a := range actions {
					if !smsActions[a] {
						p.add("%s: %s on Resource \"*\" (only sns:Publish to a phone number and sns:CheckIfPhoneNumberIsOptedOut may be)", s.from, a)
					}
				}
				continue
			}
			if i := strings.IndexAny(r, "*?"); i >= 0 && i != len(r)-1 {
				p.add("%s: resource %q has a wildcard before its end", s.from, r)
			}
		}
	}
	return p
}

// allowed is what the statements grant.
func allowed(sts []statement) grants {
	g := grants{}
	for _, s := range sts {
		if render(s.m["Effect"]) == "Allow" {
			g.add(strs(s.m["Resource"]), strs(s.m["Action"])...)
		}
	}
	return g
}

// diffGrants says what got grants beyond want and what it lacks.
func diffGrants(who string, got, want grants) (p problems) {
	keys := func(m map[string]bool) []string {
		var k []string
		for s := range m {
			k = append(k, s)
		}
		sort.Strings(k)
		return k
	}
	var actions []string
	for a := range got {
		actions = append(actions, a)
	}
	for a := range want {
		if got[a] == nil {
			actions = append(actions, a)
		}
	}
	sort.Strings(actions)
	for _, a := range actions {
		for _, r := range keys(got[a]) {
			if !want[a][r] {
				p.add("%s grants %s on %s, which it does not need", who, a, r)
			}
		}
		for _, r := range keys(want[a]) {
			if !got[a][r] {
				p.add("%s lacks %s on %s", who, a, r)
			}
		}
	}
	return p
}

// trust checks a role's trust policy: one statement letting service
// assume it, with the conditions given (key → rendered value).
func trust(tp *tmpl, role, service string, conds map[string]string) (p problems) {
	_, props := tp.resource(role)
	sts := docStatements(role+" trust", props["AssumeRolePolicyDocument"])
	if len(sts) != 1 {
		return append(p, fmt.Sprintf("%s: %d trust statements, want 1 (%s)", role, len(sts), service))
	}
	s := sts[0].m
	if render(s["Effect"]) != "Allow" || !slices.Equal(strs(s["Action"]), []string{"sts:AssumeRole"}) ||
		!slices.Equal(strs(at(s, "Principal.Service")), []string{service}) || at(s, "Principal.AWS") != nil {
		p.add("%s: trusts %s, want only %s to sts:AssumeRole", role, render(s), service)
	}
	for k, v := range conds {
		if got := render(at(s, "Condition.StringEquals."+k)); got != v {
			p.add("%s: trust condition StringEquals %s is %q, want %q", role, k, got, v)
		}
	}
	return p
}

// checkRoles: every function has a role of its own (an AWS::IAM::Role in
// this template, trusted by Lambda only), every statement of it is least
// privilege, and together they grant exactly wantGrants.
func checkRoles(tp *tmpl) (p problems) {
	owner := map[string]string{}
	for _, fn := range functions {
		typ, props := tp.resource(fn)
		if typ != "AWS::Serverless::Function" {
			p.add("%s is %q, not an AWS::Serverless::Function", fn, typ)
			continue
		}
		if props["Policies"] != nil {
			p.add("%s: SAM Policies beside its Role (its role is the one place of its permissions)", fn)
		}
		r := render(props["Role"])
		role := strings.TrimSuffix(strings.TrimPrefix(r, "${"), ".Arn}")
		if !strings.HasPrefix(r, "${") || !strings.HasSuffix(r, ".Arn}") {
			p.add("%s: Role %q is not !GetAtt ROLE.Arn of this template", fn, r)
			continue
		}
		if typ, _ := tp.resource(role); typ != "AWS::IAM::Role" {
			p.add("%s: its role %s is %q, not an AWS::IAM::Role", fn, role, typ)
			continue
		}
		if other, ok := owner[role]; ok {
			p.add("%s and %s share the role %s", other, fn, role)
			continue
		}
		owner[role] = fn
		p = append(p, trust(tp, role, "lambda.amazonaws.com", nil)...)
		sts, sp := tp.roleStatements(role)
		p = append(p, sp...)
		p = append(p, leastPrivilege(sts)...)
		p = append(p, diffGrants(fn+" ("+role+")", allowed(sts), wantGrants(fn))...)
	}
	for _, role := range tp.ofType("AWS::IAM::Role") {
		if owner[role] == "" && role != "SchedulerRole" {
			p.add("role %s belongs to no function and is not the scheduler's", role)
		}
	}
	return p
}

// checkScheduler: the schedule group, the role Scheduler assumes (it may
// only invoke TimerFunction and write to the schedules' dead-letter
// queue), and the five-minute safety sweep.
func checkScheduler(tp *tmpl) (p problems) {
	if typ, _ := tp.resource("TimerScheduleGroup"); typ != "AWS::Scheduler::ScheduleGroup" {
		p.add("TimerScheduleGroup is %q, not an AWS::Scheduler::ScheduleGroup", typ)
	}
	if typ, _ := tp.resource("ScheduleDLQ"); typ != "AWS::SQS::Queue" {
		p.add("ScheduleDLQ is %q, not an AWS::SQS::Queue", typ)
	}
	if typ, _ := tp.resource("SchedulerRole"); typ != "AWS::IAM::Role" {
		p.add("SchedulerRole is %q, not an AWS::IAM::Role", typ)
		return p
	}
	p = append(p, trust(tp, "SchedulerRole", "scheduler.amazonaws.com", map[string]string{"aws:SourceAccount": "${AWS::AccountId}"})...)
	sts, sp := tp.roleStatements("SchedulerRole")
	p = append(p, sp...)
	p = append(p, leastPrivilege(sts)...)
	want := grants{}
	want.add([]string{timerArn}, "lambda:InvokeFunction")
	want.add([]string{"${ScheduleDLQ.Arn}"}, "sqs:SendMessage")
	p = append(p, diffGrants("SchedulerRole", allowed(sts), want)...)

	// The timer function's ARN, as the role and the environment write it,
	// is the one its name makes.
	_, props := tp.resource(timerFn)
	if got := arnPrefix + "lambda:" + regionAcct + "function:" + render(props["FunctionName"]); got != timerArn {
		p.add("TimerFunction's ARN is %q, but the scheduler role and NEXTUP_SCHEDULE_TARGET_ARN name %q", got, timerArn)
	}

	var sweeps int
	for _, id := range tp.ofType("AWS::Scheduler::Schedule") {
		_, s := tp.resource(id)
		var in map[string]any
		_ = json.Unmarshal([]byte(render(at(s, "Target.Input"))), &in)
		if render(at(s, "Target.Arn")) != "${TimerFunction.Arn}" || in["nextup"] != "sweep" {
			continue
		}
		sweeps++
		if got := render(s["ScheduleExpression"]); got != "rate(5 minutes)" {
			p.add("%s: the sweep runs at %q, want rate(5 minutes)", id, got)
		}
		if got := render(at(s, "Target.RoleArn")); got != schedRoleArn {
			p.add("%s: the sweep's role is %q, want %s", id, got, schedRoleArn)
		}
		if st := render(s["State"]); st != "" && st != "ENABLED" {
			p.add("%s: the sweep is %s", id, st)
		}
	}
	if sweeps != 1 {
		p.add("%d safety sweeps (an AWS::Scheduler::Schedule sending {\"nextup\":\"sweep\"} to TimerFunction), want 1", sweeps)
	}
	return p
}

// migrateRecorder is a dynamo.API that answers Migrate on a missing table
// and keeps what it asks for: the table it creates and the expiry it turns
// on. The template must declare exactly those.
type migrateRecorder struct {
	dynamo.API // nil: any other call panics
	created    *dynamodb.CreateTableInput
	ttl        *types.TimeToLiveSpecification
}

func (r *migrateRecorder) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if r.created == nil {
		return nil, &types.ResourceNotFoundException{}
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableStatus: types.TableStatusActive}}, nil
}

func (r *migrateRecorder) CreateTable(_ context.Context, in *dynamodb.CreateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	r.created = in
	return &dynamodb.CreateTableOutput{}, nil
}

func (r *migrateRecorder) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return &dynamodb.DescribeTimeToLiveOutput{TimeToLiveDescription: &types.TimeToLiveDescription{TimeToLiveStatus: types.TimeToLiveStatusDisabled}}, nil
}

func (r *migrateRecorder) UpdateTimeToLive(_ context.Context, in *dynamodb.UpdateTimeToLiveInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	r.ttl = in.TimeToLiveSpecification
	return &dynamodb.UpdateTimeToLiveOutput{}, nil
}

// storeTable is the table store/dynamo makes for the template's prefix
// (its Migrate, on a recorder), and the attribute it expires items by.
func storeTable() (*dynamodb.CreateTableInput, string, error) {
	rec := &migrateRecorder{}
	if err := dynamo.New(rec, dynamo.TableName("${TablePrefix}")).Migrate(context.Background()); err != nil {
		return nil, "", err
	}
	if rec.created == nil || rec.ttl == nil || rec.ttl.AttributeName == nil {
		return nil, "", fmt.Errorf("Migrate made no table or turned on no expiry")
	}
	return rec.created, *rec.ttl.AttributeName, nil
}

func keySchema(v any) []string {
	var out []string
	for _, k := range list(v) {
		out = append(out, render(at(k, "AttributeName"))+" "+render(at(k, "KeyType")))
	}
	return out
}

func sdkKeySchema(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, *k.AttributeName+" "+string(k.KeyType))
	}
	return out
}

// checkTable: the table is what store/dynamo creates (TableDefinition,
// through Migrate): the same name for the prefix, attributes, key, indexes
// (keys and projection), billing and expiry attribute; and point-in-time
// recovery on, kept when the stack goes.
func checkTable(tp *tmpl) (p problems) {
	want, ttl, err := storeTable()
	if err != nil {
		return append(p, err.Error())
	}
	typ, t := tp.resource("Table")
	if typ != "AWS::DynamoDB::Table" {
		return append(p, fmt.Sprintf("Table is %q, not an AWS::DynamoDB::Table", typ))
	}
	if got := render(t["TableName"]); got != *want.TableName {
		p.add("TableName is %q; the store opens %q for NEXTUP_DB's prefix", got, *want.TableName)
	}
	gotAttrs, wantAttrs := map[string]string{}, map[string]string{}
	for _, a := range list(t["AttributeDefinitions"]) {
		name := render(at(a, "AttributeName"))
		if _, dup := gotAttrs[name]; dup {
			p.add("attribute %s defined twice", name)
		}
		gotAttrs[name] = render(at(a, "AttributeType"))
	}
	for _, a := range want.AttributeDefinitions {
		wantAttrs[*a.AttributeName] = string(a.AttributeType)
	}
	if !reflect.DeepEqual(gotAttrs, wantAttrs) {
		p.add("AttributeDefinitions are %v; TableDefinition has %v", gotAttrs, wantAttrs)
	}
	if got, w := keySchema(t["KeySchema"]), sdkKeySchema(want.KeySchema); !slices.Equal(got, w) {
		p.add("KeySchema is %v; TableDefinition has %v", got, w)
	}
	type gsi struct {
		keys       []string
		projection string
		nonKey     []string
	}
	gotIdx, wantIdx := map[string]gsi{}, map[string]gsi{}
	for _, g := range list(t["GlobalSecondaryIndexes"]) {
		gotIdx[render(at(g, "IndexName"))] = gsi{keySchema(at(g, "KeySchema")), render(at(g, "Projection.ProjectionType")), strs(at(g, "Projection.NonKeyAttributes"))}
		if at(g, "ProvisionedThroughput") != nil {
			p.add("index %s has provisioned throughput on an on-demand table", render(at(g, "IndexName")))
		}
	}
	for _, g := range want.GlobalSecondaryIndexes {
		wantIdx[*g.IndexName] = gsi{sdkKeySchema(g.KeySchema), string(g.Projection.ProjectionType), g.Projection.NonKeyAttributes}
	}
	if !reflect.DeepEqual(gotIdx, wantIdx) {
		p.add("GlobalSecondaryIndexes are %v; TableDefinition has %v", gotIdx, wantIdx)
	}
	if got := render(t["BillingMode"]); got != string(want.BillingMode) {
		p.add("BillingMode is %q; TableDefinition has %q (on-demand)", got, want.BillingMode)
	}
	if t["ProvisionedThroughput"] != nil {
		p.add("ProvisionedThroughput on an on-demand table")
	}
	if got := render(at(t, "TimeToLiveSpecification.AttributeName")); got != ttl || at(t, "TimeToLiveSpecification.Enabled") != true {
		p.add("TimeToLiveSpecification is %s; the store expires items by %q", render(t["TimeToLiveSpecification"]), ttl)
	}
	if at(t, "PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled") != true {
		p.add("point-in-time recovery is off")
	}
	r := tp.resources()["Table"]
	if render(at(r, "DeletionPolicy")) != "Retain" || render(at(r, "UpdateReplacePolicy")) != "Retain" {
		p.add("the table's DeletionPolicy/UpdateReplacePolicy are %q/%q, want Retain", render(at(r, "DeletionPolicy")), render(at(r, "UpdateReplacePolicy")))
	}
	return p
}

// effective is a function's properties with Globals.Function applied
// (environment variables merged, the function's own winning), as SAM does.
func (tp *tmpl) effective(fn string) map[string]any {
	out := map[string]any{}
	g, _ := at(tp.root, "Globals.Function").(map[string]any)
	for k, v := range g {
		out[k] = v
	}
	_, props := tp.resource(fn)
	for k, v := range props {
		out[k] = v
	}
	vars := map[string]any{}
	for _, src := range []any{at(g, "Environment.Variables"), at(props, "Environment.Variables")} {
		m, _ := src.(map[string]any)
		for k, v := range m {
			vars[k] = v
		}
	}
	out["Environment"] = map[string]any{"Variables": vars}
	return out
}

// checkFunctions: every function runs the one bootstrap (arm64,
// provided.al2023, handler bootstrap, the zip make lambda builds), with
// 256 MB, and has the whole environment.
func checkFunctions(tp *tmpl) (p problems) {
	zip := filepath.Join("..", "..", "dist", "lambda-arm64.zip") // make lambda
	for _, fn := range functions {
		e := tp.effective(fn)
		for key, want := range map[string]string{"Runtime": "provided.al2023", "Handler": "bootstrap", "Architectures": "[arm64]", "MemorySize": "256"} {
			if got := render(e[key]); got != want {
				p.add("%s: %s is %q, want %q", fn, key, got, want)
			}
		}
		if got := filepath.Join(filepath.Dir(templatePath), render(e["CodeUri"])); got != zip {
			p.add("%s: CodeUri %q is not make lambda's %s", fn, render(e["CodeUri"]), zip)
		}
		vars, _ := at(e, "Environment.Variables").(map[string]any)
		for k, want := range wantEnv {
			if got, ok := vars[k]; !ok {
				p.add("%s: no %s", fn, k)
			} else if render(got) != want {
				p.add("%s: %s is %q, want %q", fn, k, render(got), want)
			}
		}
		for k := range vars {
			if _, ok := wantEnv[k]; !ok {
				p.add("%s: %s is not an environment variable the bootstrap reads (wantEnv)", fn, k)
			}
		}
	}
	if got := render(at(tp.root, "Resources.TimerFunction.Properties.FunctionName")); got != "${AWS::StackName}-timer" {
		p.add("TimerFunction's name is %q, want ${AWS::StackName}-timer", got)
	}
	for _, opt := range []string{"SMSSenderID", "SMSOriginationNumber"} {
		if d, ok := at(tp.root, "Parameters."+opt).(map[string]any); !ok || d["Default"] != "" {
			p.add("parameter %s is missing or not optional (Default \"\")", opt)
		}
	}
	return p
}

// event is a function's only SAM event of typ; nil when it has another
// number of events or another type.
func event(e map[string]any, typ string) map[string]any {
	evs, _ := e["Events"].(map[string]any)
	if len(evs) != 1 {
		return nil
	}
	for _, ev := range evs {
		if render(at(ev, "Type")) == typ {
			props, _ := at(ev, "Properties").(map[string]any)
			return props
		}
	}
	return nil
}

// checkTriggers: each function has its own trigger and no other.
func checkTriggers(tp *tmpl) (p problems) {
	for _, fn := range functions {
		e := tp.effective(fn)
		if fn != apiFn && e["FunctionUrlConfig"] != nil {
			p.add("%s has a Function URL; only ApiFunction answers HTTP", fn)
		}
		if (fn == apiFn || fn == timerFn) && e["Events"] != nil {
			p.add("%s has SAM events; its trigger is its own (Function URL or Scheduler)", fn)
		}
	}

	api := tp.effective(apiFn)
	if got := render(at(api, "FunctionUrlConfig.AuthType")); got != "NONE" {
		p.add("ApiFunction's Function URL AuthType is %q, want NONE (nextup checks its own keys and tokens)", got)
	}
	if n, _ := num(api["Timeout"]); n < 10 || n > 60 {
		p.add("ApiFunction's Timeout is %v, want about 30 s", api["Timeout"])
	}

	send := tp.effective(sendFn)
	if ev := event(send, "SQS"); ev == nil {
		p.add("SendFunction has not exactly one event, an SQS one")
	} else {
		for key, want := range map[string]string{"Queue": sendQueueArn, "BatchSize": "10",
			"FunctionResponseTypes": "[ReportBatchItemFailures]", "ScalingConfig.MaximumConcurrency": "2"} {
			if got := render(at(ev, key)); got != want {
				p.add("SendFunction's SQS event: %s is %q, want %q", key, got, want)
			}
		}
	}
	_, q := tp.resource("SendQueue")
	timeout, _ := num(send["Timeout"])
	if vis, ok := num(q["VisibilityTimeout"]); !ok || timeout == 0 || vis < 6*timeout {
		p.add("SendQueue's VisibilityTimeout %v is less than 6 × SendFunction's Timeout %v", q["VisibilityTimeout"], send["Timeout"])
	}
	if got := render(at(q, "RedrivePolicy.deadLetterTargetArn")); got != "${SendDLQ.Arn}" {
		p.add("SendQueue's dead-letter queue is %q, want ${SendDLQ.Arn}", got)
	}
	if n, _ := num(at(q, "RedrivePolicy.maxReceiveCount")); n != 5 {
		p.add("SendQueue's maxReceiveCount is %v, want 5", at(q, "RedrivePolicy.maxReceiveCount"))
	}
	if typ, _ := tp.resource("SendDLQ"); typ != "AWS::SQS::Queue" {
		p.add("SendDLQ is %q, not an AWS::SQS::Queue", typ)
	}

	if ev := event(tp.effective(inboundFn), "S3"); ev == nil {
		p.add("InboundMailFunction has not exactly one event, an S3 one")
	} else {
		if got := render(ev["Bucket"]); got != "${MailBucket}" {
			p.add("InboundMailFunction's S3 event is on %q, want ${MailBucket}", got)
		}
		if !slices.Contains(strs(ev["Events"]), "s3:ObjectCreated:*") {
			p.add("InboundMailFunction's S3 event is %v, want s3:ObjectCreated:*", strs(ev["Events"]))
		}
		if rules := list(at(ev, "Filter.S3Key.Rules")); len(rules) != 1 || render(at(rules[0], "Name")) != "prefix" || render(at(rules[0], "Value")) != "inbound/" {
			p.add("InboundMailFunction's S3 filter is %s, want prefix inbound/", render(rules))
		}
	}

	// S3 and SNS invoke asynchronously: an event that still fails after
	// Lambda's retries goes to FailedEventsQueue, not nowhere.
	for _, fn := range []string{inboundFn, feedbackFn} {
		cfg := at(tp.effective(fn), "EventInvokeConfig")
		if got := render(at(cfg, "DestinationConfig.OnFailure.Destination")); got != failedEventsArn ||
			render(at(cfg, "DestinationConfig.OnFailure.Type")) != "SQS" {
			p.add("%s's failed events go to %q, want SQS %s", fn, got, failedEventsArn)
		}
	}
	if typ, _ := tp.resource("FailedEventsQueue"); typ != "AWS::SQS::Queue" {
		p.add("FailedEventsQueue is %q, not an AWS::SQS::Queue", typ)
	}

	if ev := event(tp.effective(feedbackFn), "SNS"); ev == nil {
		p.add("MailFeedbackFunction has not exactly one event, an SNS one")
	} else if got := render(ev["Topic"]); got != "${MailFeedbackTopic}" {
		p.add("MailFeedbackFunction's SNS event is on %q, want ${MailFeedbackTopic}", got)
	}
	return p
}

// checkLogs: each function has its log group, /aws/lambda/<its name>,
// kept 7 days; so is any other log group.
func checkLogs(tp *tmpl) (p problems) {
	for _, fn := range functions {
		name := "/aws/lambda/${" + fn + "}"
		if n := at(tp.resources(), fn+".Properties.FunctionName"); n != nil {
			name = "/aws/lambda/" + render(n)
		}
		lg := logGroupOf(fn)
		typ, props := tp.resource(lg)
		if typ != "AWS::Logs::LogGroup" {
			p.add("%s: no log group %s", fn, lg)
			continue
		}
		if got := render(props["LogGroupName"]); got != name {
			p.add("%s is named %q, but %s logs to %q", lg, got, fn, name)
		}
		if c := at(tp.effective(fn), "LoggingConfig.LogGroup"); c != nil && render(c) != "${"+lg+"}" {
			p.add("%s logs to %s, not %s", fn, render(c), lg)
		}
	}
	for _, lg := range tp.ofType("AWS::Logs::LogGroup") {
		_, props := tp.resource(lg)
		if n, _ := num(props["RetentionInDays"]); n != 7 {
			p.add("%s keeps logs %v days, want 7", lg, props["RetentionInDays"])
		}
	}
	return p
}

// checkBudget: a monthly cost budget of BudgetUSD (default 10), with an
// email to AlertEmail at 80% actual and 100% forecast.
func checkBudget(tp *tmpl) (p problems) {
	ids := tp.ofType("AWS::Budgets::Budget")
	if len(ids) != 1 {
		return append(p, fmt.Sprintf("%d budgets, want 1", len(ids)))
	}
	_, b := tp.resource(ids[0])
	for key, want := range map[string]string{"Budget.BudgetType": "COST", "Budget.TimeUnit": "MONTHLY",
		"Budget.BudgetLimit.Amount": "${BudgetUSD}", "Budget.BudgetLimit.Unit": "USD"} {
		if got := render(at(b, key)); got != want {
			p.add("budget %s is %q, want %q", key, got, want)
		}
	}
	if d, _ := num(at(tp.root, "Parameters.BudgetUSD.Default")); d != 10 {
		p.add("BudgetUSD's default is %v, want 10", at(tp.root, "Parameters.BudgetUSD.Default"))
	}
	for _, want := range []struct {
		typ       string
		threshold float64
	}{{"ACTUAL", 80}, {"FORECASTED", 100}} {
		found := false
		for _, n := range list(b["NotificationsWithSubscribers"]) {
			th, _ := num(at(n, "Notification.Threshold"))
			if render(at(n, "Notification.NotificationType")) != want.typ || th != want.threshold ||
				render(at(n, "Notification.ThresholdType")) != "PERCENTAGE" || render(at(n, "Notification.ComparisonOperator")) != "GREATER_THAN" {
				continue
			}
			for _, s := range list(at(n, "Subscribers")) {
				found = found || (render(at(s, "SubscriptionType")) == "EMAIL" && render(at(s, "Address")) == "${AlertEmail}")
			}
		}
		if !found {
			p.add("no email to AlertEmail at %v%% %s", want.threshold, want.typ)
		}
	}
	return p
}

// checkBucket: versioned, private, encrypted; inbound mail expires after
// 30 days and old versions after 90.
func checkBucket(tp *tmpl) (p problems) {
	typ, b := tp.resource("MailBucket")
	if typ != "AWS::S3::Bucket" {
		return append(p, fmt.Sprintf("MailBucket is %q, not an AWS::S3::Bucket", typ))
	}
	if got := render(at(b, "VersioningConfiguration.Status")); got != "Enabled" {
		p.add("versioning is %q, want Enabled", got)
	}
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if at(b, "PublicAccessBlockConfiguration."+k) != true {
			p.add("public access block %s is not true", k)
		}
	}
	if render(at(b, "BucketEncryption.ServerSideEncryptionConfiguration.0.ServerSideEncryptionByDefault.SSEAlgorithm")) == "" {
		p.add("no default encryption")
	}
	var inbound, noncurrent bool
	for _, r := range list(at(b, "LifecycleConfiguration.Rules")) {
		if render(at(r, "Status")) != "Enabled" {
			continue
		}
		exp, _ := num(at(r, "ExpirationInDays"))
		inbound = inbound || (render(at(r, "Prefix")) == "inbound/" && exp == 30)
		nc, _ := num(at(r, "NoncurrentVersionExpiration.NoncurrentDays"))
		if n, ok := num(at(r, "NoncurrentVersionExpirationInDays")); ok {
			nc = n
		}
		noncurrent = noncurrent || (render(at(r, "Prefix")) == "" && at(r, "TagFilters") == nil && nc == 90)
	}
	if !inbound {
		p.add("no enabled lifecycle rule expiring inbound/ after 30 days")
	}
	if !noncurrent {
		p.add("no enabled lifecycle rule expiring every noncurrent version after 90 days")
	}
	return p
}

// checkMail: bounces and complaints reach MailFeedbackTopic; the receipt
// rule stores mail to InboundDomain under inbound/, and the bucket lets
// only that rule's SES write there.
func checkMail(tp *tmpl) (p problems) {
	if typ, _ := tp.resource("MailConfigurationSet"); typ != "AWS::SES::ConfigurationSet" {
		p.add("MailConfigurationSet is %q, not an AWS::SES::ConfigurationSet", typ)
	}
	var feedback bool
	for _, id := range tp.ofType("AWS::SES::ConfigurationSetEventDestination") {
		_, d := tp.resource(id)
		var types []string
		for _, t := range strs(at(d, "EventDestination.MatchingEventTypes")) {
			types = append(types, strings.ToLower(t))
		}
		sort.Strings(types)
		feedback = feedback || (render(d["ConfigurationSetName"]) == "${MailConfigurationSet}" &&
			at(d, "EventDestination.Enabled") == true && slices.Equal(types, []string{"bounce", "complaint"}) &&
			render(at(d, "EventDestination.SnsDestination.TopicARN")) == "${MailFeedbackTopic}")
	}
	if !feedback {
		p.add("no enabled event destination of MailConfigurationSet sending bounces and complaints to MailFeedbackTopic")
	}

	var ruleArn string
	var rules int
	for _, id := range tp.ofType("AWS::SES::ReceiptRule") {
		_, r := tp.resource(id)
		rules++
		set := r["RuleSetName"]
		if id, ok := refTo(set); ok {
			_, rs := tp.resource(id)
			set = rs["RuleSetName"]
		}
		ruleArn = arnPrefix + "ses:" + regionAcct + "receipt-rule-set/" + render(set) + ":receipt-rule/" + render(at(r, "Rule.Name"))
		if !slices.Contains(strs(at(r, "Rule.Recipients")), "${InboundDomain}") || at(r, "Rule.Enabled") != true {
			p.add("%s: not an enabled rule for ${InboundDomain}", id)
		}
		var s3 bool
		for _, a := range list(at(r, "Rule.Actions")) {
			s3 = s3 || (render(at(a, "S3Action.BucketName")) == "${MailBucket}" && render(at(a, "S3Action.ObjectKeyPrefix")) == "inbound/")
		}
		if !s3 {
			p.add("%s: no S3 action writing to MailBucket under inbound/", id)
		}
		if !slices.Contains(strs(tp.resources()[id].(map[string]any)["DependsOn"]), "MailBucketPolicy") {
			p.add("%s does not depend on MailBucketPolicy (SES checks it may write when the rule is made)", id)
		}
	}
	if rules != 1 {
		p.add("%d receipt rules, want 1", rules)
	}
	var sesPut bool
	for _, id := range tp.ofType("AWS::S3::BucketPolicy") {
		_, bp := tp.resource(id)
		if render(bp["Bucket"]) != "${MailBucket}" {
			continue
		}
		for _, s := range docStatements(id, bp["PolicyDocument"]) {
			if render(s.m["Effect"]) != "Allow" {
				continue
			}
			if !slices.Equal(strs(at(s.m, "Principal.Service")), []string{"ses.amazonaws.com"}) ||
				!slices.Equal(strs(s.m["Action"]), []string{"s3:PutObject"}) || !slices.Equal(strs(s.m["Resource"]), []string{inboundObjs}) {
				p.add("%s: allows %s; only SES's s3:PutObject under inbound/ is wanted", s.from, render(s.m))
				continue
			}
			account := render(at(s.m, "Condition.StringEquals.aws:SourceAccount"))
			source := render(at(s.m, "Condition.ArnLike.aws:SourceArn")) + render(at(s.m, "Condition.ArnEquals.aws:SourceArn"))
			if account != "${AWS::AccountId}" || source != ruleArn {
				p.add("%s: SES may write when aws:SourceAccount is %q and aws:SourceArn %q, want ${AWS::AccountId} and %q", s.from, account, source, ruleArn)
				continue
			}
			sesPut = true
		}
	}
	if !sesPut {
		p.add("MailBucket's policy does not let SES (this account, this receipt rule) put inbound mail")
	}
	return p
}

// checkSecret: the secret's JSON has the keys the bootstrap reads, the
// admin token generated.
func checkSecret(tp *tmpl) (p problems) {
	typ, s := tp.resource("Secrets")
	if typ != "AWS::SecretsManager::Secret" {
		return append(p, fmt.Sprintf("Secrets is %q, not an AWS::SecretsManager::Secret", typ))
	}
	if got := render(at(s, "GenerateSecretString.GenerateStringKey")); got != "admin_token" {
		p.add("the generated key is %q, want admin_token", got)
	}
	var keys map[string]any
	if err := json.Unmarshal([]byte(render(at(s, "GenerateSecretString.SecretStringTemplate"))), &keys); err != nil {
		p.add("SecretStringTemplate is not a JSON object: %v", err)
	}
	for _, k := range []string{"stripe_secret_key", "stripe_webhook_secret", "anthropic_api_key"} {
		if _, ok := keys[k]; !ok {
			p.add("SecretStringTemplate has no %s", k)
		}
	}
	return p
}

// checkOutputs: what the guide tells the operator to read.
func checkOutputs(tp *tmpl) (p problems) {
	for name, want := range map[string]string{
		"ApiUrl": "${ApiFunctionUrl.FunctionUrl}", "TableName": "${Table}", "SendQueueUrl": "${SendQueue}",
		"SendDLQUrl": "${SendDLQ}", "ScheduleDLQUrl": "${ScheduleDLQ}", "BucketName": "${MailBucket}",
	} {
		if got := render(at(tp.root, "Outputs."+name+".Value")); got != want {
			p.add("output %s is %q, want %q", name, got, want)
		}
	}
	return p
}
