package cost

import (
	"slices"
	"strings"
)

// PriceDate is when the prices below were last checked against the
// public price pages. They could not be fetched when this model was
// written (the machine reaches no web page but package registries): each
// is the page's published list price as known for 2026, and those marked
// approximate may be off by some percent. Check the page named in each
// field's comment before relying on a line.
const PriceDate = "2026"

// Prices is one AWS region's price list for the services the reference
// deployment uses, in US dollars. Approx names the fields (by their Go
// name) whose figure is approximate: not re-read from the price page, or
// a regional figure derived from another region's.
type Prices struct {
	Region string
	// https://aws.amazon.com/lambda/pricing/ (arm64, the first tier).
	LambdaPerMillionRequests float64
	LambdaPerGBSecondARM     float64
	// https://aws.amazon.com/dynamodb/pricing/on-demand/ (after the
	// November 2024 on-demand price cut), and PITR per GB-month.
	DynamoPerMillionRRU  float64
	DynamoPerMillionWRU  float64
	DynamoPerGBMonth     float64
	DynamoPITRPerGBMonth float64
	// https://aws.amazon.com/eventbridge/pricing/ (Scheduler).
	SchedulerPerMillion float64
	// https://aws.amazon.com/ses/pricing/: outbound and inbound mail, and
	// inbound 256 KB chunks.
	SESPerThousandOut     float64
	SESPerThousandIn      float64
	SESPerThousandInChunk float64
	// https://aws.amazon.com/s3/pricing/ (Standard).
	S3PerGBMonth      float64
	S3PerThousandPut  float64
	S3PerThousandGet  float64
	SQSPerMillion     float64 // https://aws.amazon.com/sqs/pricing/ (standard queue)
	LogsPerGBIngested float64 // https://aws.amazon.com/cloudwatch/pricing/ (Logs, standard class)
	LogsPerGBMonth    float64
	// https://aws.amazon.com/secrets-manager/pricing/
	SecretPerMonth          float64
	SecretPerTenThousandAPI float64
	// https://aws.amazon.com/bedrock/pricing/ (Anthropic Claude Haiku 4.5,
	// on demand), per million tokens.
	BedrockPerMillionIn  float64
	BedrockPerMillionOut float64
	// https://aws.amazon.com/ec2/pricing/on-demand/ (data transfer out to
	// the internet, the first 10 TB tier).
	DataOutPerGB float64
	// https://aws.amazon.com/aws-cost-management/aws-budgets/pricing/: the
	// first two budgets of an account are free; each further one a day.
	BudgetPerDay float64

	Approx []string
}

// approx reports whether the named field is approximate.
func (p Prices) approx(field ...string) bool {
	for _, f := range field {
		if slices.Contains(p.Approx, f) {
			return true
		}
	}
	return false
}

// regions are the price tables the model knows. us-east-1's figures are
// the ones AWS's pages lead with; the European ones are marked where they
// are not re-read.
var regions = []Prices{
	{
		Region:                   "us-east-1",
		LambdaPerMillionRequests: 0.20, LambdaPerGBSecondARM: 0.0000133334,
		DynamoPerMillionRRU: 0.125, DynamoPerMillionWRU: 0.625, DynamoPerGBMonth: 0.25, DynamoPITRPerGBMonth: 0.20,
		SchedulerPerMillion: 1.00,
		SESPerThousandOut:   0.10, SESPerThousandIn: 0.10, SESPerThousandInChunk: 0.09,
		S3PerGBMonth: 0.023, S3PerThousandPut: 0.005, S3PerThousandGet: 0.0004,
		SQSPerMillion:     0.40,
		LogsPerGBIngested: 0.50, LogsPerGBMonth: 0.03,
		SecretPerMonth: 0.40, SecretPerTenThousandAPI: 0.05,
		BedrockPerMillionIn: 1.00, BedrockPerMillionOut: 5.00,
		DataOutPerGB: 0.09,
		BudgetPerDay: 0.02,
		Approx:       []string{"BedrockPerMillionIn", "BedrockPerMillionOut"},
	},
	{
		Region:                   "eu-west-1",
		LambdaPerMillionRequests: 0.20, LambdaPerGBSecondARM: 0.0000133334,
		DynamoPerMillionRRU: 0.1415, DynamoPerMillionWRU: 0.7068, DynamoPerGBMonth: 0.283, DynamoPITRPerGBMonth: 0.22,
		SchedulerPerMillion: 1.00,
		SESPerThousandOut:   0.10, SESPerThousandIn: 0.10, SESPerThousandInChunk: 0.09,
		S3PerGBMonth: 0.023, S3PerThousandPut: 0.005, S3PerThousandGet: 0.0004,
		SQSPerMillion:     0.40,
		LogsPerGBIngested: 0.57, LogsPerGBMonth: 0.03,
		SecretPerMonth: 0.40, SecretPerTenThousandAPI: 0.05,
		BedrockPerMillionIn: 1.10, BedrockPerMillionOut: 5.50,
		DataOutPerGB: 0.09,
		BudgetPerDay: 0.02,
		Approx: []string{"DynamoPerMillionRRU", "DynamoPerMillionWRU", "DynamoPerGBMonth", "DynamoPITRPerGBMonth",
			"SchedulerPerMillion", "LogsPerGBIngested", "BedrockPerMillionIn", "BedrockPerMillionOut"},
	},
	{
		Region:                   "eu-west-2",
		LambdaPerMillionRequests: 0.20, LambdaPerGBSecondARM: 0.0000133334,
		DynamoPerMillionRRU: 0.1485, DynamoPerMillionWRU: 0.7425, DynamoPerGBMonth: 0.297, DynamoPITRPerGBMonth: 0.24,
		SchedulerPerMillion: 1.00,
		SESPerThousandOut:   0.10, SESPerThousandIn: 0.10, SESPerThousandInChunk: 0.09,
		S3PerGBMonth: 0.024, S3PerThousandPut: 0.0053, S3PerThousandGet: 0.00042,
		SQSPerMillion:     0.40,
		LogsPerGBIngested: 0.5985, LogsPerGBMonth: 0.0315,
		SecretPerMonth: 0.40, SecretPerTenThousandAPI: 0.05,
		BedrockPerMillionIn: 1.10, BedrockPerMillionOut: 5.50,
		DataOutPerGB: 0.09,
		BudgetPerDay: 0.02,
		Approx: []string{"DynamoPerMillionRRU", "DynamoPerMillionWRU", "DynamoPerGBMonth", "DynamoPITRPerGBMonth",
			"SchedulerPerMillion", "S3PerGBMonth", "S3PerThousandPut", "S3PerThousandGet", "SQSPerMillion",
			"LogsPerGBIngested", "LogsPerGBMonth", "BedrockPerMillionIn", "BedrockPerMillionOut"},
	},
}

// Regions lists the regions the model has prices for.
func Regions() []string {
	var out []string
	for _, r := range regions {
		out = append(out, r.Region)
	}
	return out
}

// RegionPrices returns the price table of region, and false for a region
// the model does not know.
func RegionPrices(region string) (Prices, bool) {
	for _, r := range regions {
		if r.Region == region {
			return r, true
		}
	}
	return Prices{}, false
}

// SMSPrice is what one text costs to one country: the price of each
// message part (160 GSM characters; a longer text goes in parts of 153,
// each billed), carrier fees included, and the monthly cost of the
// origination identity the country needs (a number, or nothing for an
// alphanumeric sender ID). Source: https://aws.amazon.com/end-user-messaging/pricing/
// (SNS texts are priced as AWS End User Messaging SMS). Only the US base
// price is firm; carrier fees and the other countries' prices move often
// and are approximate.
type SMSPrice struct {
	Country     string // ISO 3166 alpha-2
	Name        string
	PerPart     float64
	Origination string // what the sender is
	OriginMonth float64
	Approx      bool
}

// smsPrices are the countries the model knows.
var smsPrices = []SMSPrice{
	// $0.00581 AWS base price per part plus the carriers' toll-free fees
	// (AT&T, T-Mobile and Verizon, about $0.0025-0.0030 a part); since
	// 2023 a text to the US needs a registered number of one's own.
	{Country: "US", Name: "United States", PerPart: 0.00851, Origination: "toll-free number", OriginMonth: 2.00, Approx: true},
	{Country: "CA", Name: "Canada", PerPart: 0.0080, Origination: "toll-free number", OriginMonth: 2.00, Approx: true},
	{Country: "GB", Name: "United Kingdom", PerPart: 0.0400, Origination: "alphanumeric sender ID (no fee)", Approx: true},
	{Country: "IE", Name: "Ireland", PerPart: 0.0650, Origination: "alphanumeric sender ID (no fee)", Approx: true},
	{Country: "AU", Name: "Australia", PerPart: 0.0450, Origination: "alphanumeric sender ID (no fee)", Approx: true},
	{Country: "DE", Name: "Germany", PerPart: 0.0900, Origination: "alphanumeric sender ID (no fee)", Approx: true},
	{Country: "FR", Name: "France", PerPart: 0.0720, Origination: "alphanumeric sender ID (no fee)", Approx: true},
}

// Countries lists the countries the model has text prices for.
func Countries() []string {
	var out []string
	for _, c := range smsPrices {
		out = append(out, c.Country)
	}
	return out
}

// CountrySMS returns the text price of a country (an ISO code, any case),
// and false for a country the model does not know.
func CountrySMS(country string) (SMSPrice, bool) {
	for _, c := range smsPrices {
		if strings.EqualFold(c.Country, country) {
			return c, true
		}
	}
	return SMSPrice{}, false
}
