package deploy

import (
	"strings"
	"testing"
)

// TestChecksCatch breaks a copy of the template in one way at a time and
// shows that the named check fails on it: a check that cannot fail
// checks nothing.
func TestChecksCatch(t *testing.T) {
	t.Parallel()
	base := load(t)
	byName := map[string]check{}
	for _, c := range checks {
		byName[c.name] = c
	}
	const (
		res    = "Resources."
		common = res + "CommonPolicy.Properties.PolicyDocument.Statement."
		send   = res + "SendRole.Properties.Policies.0.PolicyDocument.Statement."
		api    = res + "ApiRole.Properties.Policies.0.PolicyDocument.Statement."
		table  = res + "Table.Properties."
		env    = "Globals.Function.Environment.Variables."
	)
	stmt := func(action string, resource any) map[string]any {
		return map[string]any{"Effect": "Allow", "Action": action, "Resource": resource}
	}
	appendTo := func(path string, v any) func(root map[string]any) {
		path = strings.TrimSuffix(path, ".")
		return func(root map[string]any) { set(root, path, append(list(at(root, path)), v)) }
	}
	to := func(path string, v any) func(root map[string]any) {
		return func(root map[string]any) { set(root, path, v) }
	}
	ref := func(id string) any { return map[string]any{"Ref": id} }
	getAtt := func(id, attr string) any { return map[string]any{"Fn::GetAtt": []any{id, attr}} }

	cases := []struct {
		check, name string
		mutate      func(root map[string]any)
	}{
		{"header", "no SAM transform", to("Transform", nil)},
		{"references", "a Ref to nothing", to(env+"NEXTUP_SEND_QUEUE_URL", ref("SendQueu"))},
		{"references", "a DependsOn on nothing", to(res+"InboundRule.DependsOn", "MailBucketPolcy")},

		{"roles", "a service-wide wildcard", appendTo(common+"0.Action", "dynamodb:*")},
		{"roles", "an action wildcard", to(common+"0.Action", "dynamodb:*Item")},
		{"roles", "Action \"*\"", appendTo(common, stmt("*", getAtt("Table", "Arn")))},
		{"roles", "Resource \"*\" on logs", to(api+"0.Resource", "*")},
		{"roles", "Resource \"*\" on SES", to(send+"2.Resource", "*")},
		{"roles", "a wildcard inside an ARN", to(common+"5.Resource", "arn:aws:sqs:*:*:nextup")},
		{"roles", "NotAction", appendTo(common, map[string]any{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})},
		{"roles", "PassRole without its condition", to(common+"4.Condition", nil)},
		{"roles", "Scan, which no function makes", appendTo(common+"0.Action", "dynamodb:Scan")},
		{"roles", "CreateTable (no Migrate on Lambda)", appendTo(common+"0.Action", "dynamodb:CreateTable")},
		{"roles", "a store call not granted", to(common+"0.Action", []any{"dynamodb:GetItem", "dynamodb:PutItem"})},
		{"roles", "indexes for every action", appendTo(common+"0.Resource", map[string]any{"Fn::Sub": "${Table.Arn}/index/*"})},
		{"roles", "another function's log group", to(api+"0.Resource", getAtt("SendLogGroup", "Arn"))},
		{"roles", "texts from the API function", appendTo(api, stmt("sns:Publish", "*"))},
		{"roles", "the timer function without sends", to(res+"TimerRole.Properties.Policies.0.PolicyDocument.Statement", []any{
			map[string]any{"Effect": "Allow", "Action": []any{"logs:CreateLogStream", "logs:PutLogEvents"}, "Resource": getAtt("TimerLogGroup", "Arn")}})},
		{"roles", "a shared role", to(res+"SendFunction.Properties.Role", getAtt("ApiRole", "Arn"))},
		{"roles", "an AWS managed policy", appendTo(res+"ApiRole.Properties.ManagedPolicyArns", "arn:aws:iam::aws:policy/AdministratorAccess")},
		{"roles", "SAM Policies", to(res+"ApiFunction.Properties.Policies", []any{"AWSLambdaBasicExecutionRole"})},
		{"roles", "a grant through a separate policy", to(res+"Extra", map[string]any{"Type": "AWS::IAM::Policy", "Properties": map[string]any{
			"Roles": []any{ref("MailFeedbackRole")}, "PolicyName": "x",
			"PolicyDocument": map[string]any{"Statement": []any{stmt("s3:GetObject", map[string]any{"Fn::Sub": "${MailBucket.Arn}/inbound/*"})}}}})},
		{"roles", "a role trusting another service", to(res+"ApiRole.Properties.AssumeRolePolicyDocument.Statement.0.Principal.Service", "ec2.amazonaws.com")},
		{"roles", "a stray role", to(res+"StrayRole", map[string]any{"Type": "AWS::IAM::Role", "Properties": map[string]any{}})},

		{"scheduler", "no schedule group", to(res+"TimerScheduleGroup", nil)},
		{"scheduler", "no schedule role", to(res+"SchedulerRole", nil)},
		{"scheduler", "a scheduler role without its account condition", to(res+"SchedulerRole.Properties.AssumeRolePolicyDocument.Statement.0.Condition", nil)},
		{"scheduler", "a scheduler role invoking any function", to(res+"SchedulerRole.Properties.Policies.0.PolicyDocument.Statement.0.Resource",
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:*"})},
		{"scheduler", "a renamed timer function", to(res+"TimerFunction.Properties.FunctionName", map[string]any{"Fn::Sub": "${AWS::StackName}-timers"})},
		{"scheduler", "no sweep", to(res+"SweepSchedule", nil)},
		{"scheduler", "an hourly sweep", to(res+"SweepSchedule.Properties.ScheduleExpression", "rate(1 hour)")},

		{"table", "an index missing", func(root map[string]any) { set(root, table+"GlobalSecondaryIndexes.4", nil) }},
		{"table", "an index projecting everything", to(table+"GlobalSecondaryIndexes.1.Projection.ProjectionType", "ALL")},
		{"table", "an index's keys swapped", to(table+"GlobalSecondaryIndexes.2.KeySchema.0.AttributeName", "gsi3sk")},
		{"table", "an attribute of another type", to(table+"AttributeDefinitions.3.AttributeType", "N")},
		{"table", "a sort key the store lacks", appendTo(table+"KeySchema", map[string]any{"AttributeName": "sk", "KeyType": "RANGE"})},
		{"table", "expiry on another attribute", to(table+"TimeToLiveSpecification.AttributeName", "expires")},
		{"table", "point-in-time recovery off", to(table+"PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled", false)},
		{"table", "provisioned billing", to(table+"BillingMode", "PROVISIONED")},
		{"table", "another table name", to(table+"TableName", map[string]any{"Fn::Sub": "${TablePrefix}waitlist"})},
		{"table", "deleted with the stack", to(res+"Table.DeletionPolicy", "Delete")},

		{"functions", "an x86 function", to(res+"TimerFunction.Properties.Architectures", []any{"x86_64"})},
		{"functions", "another runtime", to("Globals.Function.Runtime", "provided.al2")},
		{"functions", "1 GB", to(res+"SendFunction.Properties.MemorySize", 1024)},
		{"functions", "another zip", to("Globals.Function.CodeUri", "../../dist/lambda.zip")},
		{"functions", "an environment variable missing", to(env+"NEXTUP_SEND_QUEUE_URL", nil)},
		{"functions", "an environment variable wrong", to(env+"NEXTUP_SCHEDULE_DLQ_ARN", getAtt("SendDLQ", "Arn"))},
		{"functions", "a function overriding one", to(res+"ApiFunction.Properties.Environment", map[string]any{"Variables": map[string]any{"NEXTUP_DB": "dynamodb:///x"}})},
		{"functions", "SMS sender ID required", to("Parameters.SMSSenderID.Default", nil)},

		{"triggers", "an IAM-authenticated URL", to(res+"ApiFunction.Properties.FunctionUrlConfig.AuthType", "AWS_IAM")},
		{"triggers", "a URL on another function", to(res+"SendFunction.Properties.FunctionUrlConfig", map[string]any{"AuthType": "NONE"})},
		{"triggers", "no partial batch failures", to(res+"SendFunction.Properties.Events.Send.Properties.FunctionResponseTypes", nil)},
		{"triggers", "unbounded send concurrency", to(res+"SendFunction.Properties.Events.Send.Properties.ScalingConfig", nil)},
		{"triggers", "a short visibility timeout", to(res+"SendQueue.Properties.VisibilityTimeout", 60)},
		{"triggers", "no dead-letter queue", to(res+"SendQueue.Properties.RedrivePolicy", nil)},
		{"triggers", "inbound mail from anywhere in the bucket", to(res+"InboundMailFunction.Properties.Events.Mail.Properties.Filter", nil)},
		{"triggers", "inbound mail dropped after its retries", to(res+"InboundMailFunction.Properties.EventInvokeConfig", nil)},
		{"triggers", "feedback failures sent elsewhere", to(res+"MailFeedbackFunction.Properties.EventInvokeConfig.DestinationConfig.OnFailure.Destination", getAtt("SendDLQ", "Arn"))},
		{"triggers", "feedback from another topic", to(res+"MailFeedbackFunction.Properties.Events.Feedback.Properties.Topic", ref("Other"))},

		{"logs", "a month of logs", to(res+"SendLogGroup.Properties.RetentionInDays", 30)},
		{"logs", "a log group missing", to(res+"InboundMailLogGroup", nil)},
		{"logs", "a log group of another name", to(res+"ApiLogGroup.Properties.LogGroupName", "/aws/lambda/api")},

		{"budget", "no budget", to(res+"Budget", nil)},
		{"budget", "no subscribers", to(res+"Budget.Properties.NotificationsWithSubscribers.0.Subscribers", nil)},
		{"budget", "no forecast alert", func(root map[string]any) { set(root, res+"Budget.Properties.NotificationsWithSubscribers.1", nil) }},
		{"budget", "a daily budget", to(res+"Budget.Properties.Budget.TimeUnit", "DAILY")},

		{"bucket", "versioning suspended", to(res+"MailBucket.Properties.VersioningConfiguration.Status", "Suspended")},
		{"bucket", "inbound mail kept", func(root map[string]any) { set(root, res+"MailBucket.Properties.LifecycleConfiguration.Rules.0", nil) }},
		{"bucket", "old versions kept", to(res+"MailBucket.Properties.LifecycleConfiguration.Rules.1.Status", "Disabled")},
		{"bucket", "public policies allowed", to(res+"MailBucket.Properties.PublicAccessBlockConfiguration.BlockPublicPolicy", false)},

		{"mail", "complaints not published", to(res+"MailFeedbackDestination.Properties.EventDestination.MatchingEventTypes", []any{"bounce"})},
		{"mail", "SES writing anywhere in the bucket", to(res+"MailBucketPolicy.Properties.PolicyDocument.Statement.0.Resource", map[string]any{"Fn::Sub": "${MailBucket.Arn}/*"})},
		{"mail", "SES of any account", to(res+"MailBucketPolicy.Properties.PolicyDocument.Statement.0.Condition.StringEquals", nil)},
		{"mail", "a receipt rule to another prefix", to(res+"InboundRule.Properties.Rule.Actions.0.S3Action.ObjectKeyPrefix", "mail/")},
		{"mail", "a receipt rule before the bucket policy", to(res+"InboundRule.DependsOn", nil)},

		{"secret", "no generated admin token", to(res+"Secrets.Properties.GenerateSecretString.GenerateStringKey", "password")},
		{"secret", "no Stripe keys", to(res+"Secrets.Properties.GenerateSecretString.SecretStringTemplate", `{"anthropic_api_key":""}`)},

		{"outputs", "no Function URL output", to("Outputs.ApiUrl", nil)},
	}
	for _, c := range cases {
		chk, ok := byName[c.check]
		if !ok {
			t.Fatalf("no check %q", c.check)
		}
		t.Run(c.check+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			tp := base.clone()
			c.mutate(tp.root)
			found := chk.run(tp)
			if len(found) == 0 {
				t.Fatalf("the %s check passes a template with %s", c.check, c.name)
			}
			t.Logf("caught: %s", found[0])
		})
	}
}
