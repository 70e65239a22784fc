package parse

import (
	"strconv"
	"strings"
)

// The date grammar (when.go) reads one vocabulary: English words, each
// meaning one thing. canonical rewrites what people write in the other
// languages of the businesses nextup serves (German, French, Spanish,
// Dutch), and the phrasings English says in several words, into that
// vocabulary before the grammar sees them: "nächste Woche" and "la semaine
// prochaine" become "next week", "à partir de 14h" becomes "starting 14h",
// "el próximo martes" becomes "coming tuesday". A word is rewritten alone
// only when it means the same in every language the table knows; words
// that differ ("en" is "in" in Spanish and "and" in Dutch, "de" is "of"
// and "the", "am" is German "on the" and English "am") are rewritten only
// inside a phrase that settles them.
//
// Words the grammar reads that English lacks:
//
//	coming     the next such day, whatever week it falls in (the foreign
//	           "next Tuesday"; English "next Tuesday" is next week's)
//	starting   from that day or time on ("ab", "à partir de", "vanaf")
//	overmorrow the day after tomorrow
//	weekafter  the week after next
//	otherwise  an alternative to what the sentence before asked for

// A phrase rule: the words at a position, and what replaces them. A
// pattern word "#wd" matches a weekday, "#mon" a month, "#n" a number and
// "#d" a numeric date; "$k" in the replacement copies the k-th token
// matched; "@MM-DD" is the date of a fixed holiday, "@name" one whose
// date moves (movableDay).
type phrase struct {
	pat, out []string
}

// phrases are tried longest first at every token.
var phrases = buildPhrases([][2]string{
	// English
	{"the day after tomorrow", "overmorrow"},
	{"day after tomorrow", "overmorrow"},
	{"the week after next", "weekafter"},
	{"week after next", "weekafter"},
	{"as of", "starting"},
	{"this time next week", "a week today"},
	{"tomorrow week", "a week tomorrow"},
	{"today week", "a week today"},
	{"#wd fortnight", "a fortnight on $0"},
	{"this week or next", "this week or next week"},
	{"this weekend or next", "this weekend or next weekend"},
	{"next week or the week after", "next week or weekafter"},
	{"next week or the one after", "next week or weekafter"},
	{"the one after that", "the one after"},
	{"the following one", "the one after"},
	{"the next one", "the one after"},
	{"the one afterwards", "the one after"},
	{"the following #wd", "the $2 after"},
	{"the first half of", "first half of"},
	{"the second half of", "second half of"},
	{"the latter half of", "second half of"},
	{"no later than", "until"},
	{"not later than", "until"},
	{"at the latest by", "until"},
	{"no earlier than", "starting"},
	{"not earlier than", "starting"},
	{"at the earliest", "starting"},
	{"starting from", "starting"},
	{"end of month", "end of the month"},
	{"end of this month", "end of the month"},
	{"w / c", "week commencing"},
	{"w / b", "week beginning"},
	{"failing that", "otherwise"},
	{"or else", "otherwise"},
	{"the same day", "that day"},
	// "Saturday same time" in each language: the hours said before.
	{"zur gleichen zeit", "same time"},
	{"zur selben zeit", "same time"},
	{"gleiche zeit", "same time"},
	{"gleichen uhrzeit", "same time"},
	{"même heure", "same time"},
	{"meme heure", "same time"},
	{"misma hora", "same time"},
	{"hetzelfde tijdstip", "same time"},
	{"dezelfde tijd", "same time"},
	{"zelfde tijd", "same time"},
	{"new year's eve", "@12-31"},
	{"new years eve", "@12-31"},
	{"nye", "@12-31"},
	// "early in the new year" is early January; "in the new year" alone
	// is from New Year's Day on.
	{"early in the new year", "early january"},
	{"early in the year", "early january"},
	{"in the new year", "starting @01-01"},
	{"after the new year", "after @01-01"},
	{"new year's day", "@01-01"},
	{"new years day", "@01-01"},
	{"new year's", "@01-01"},
	{"new year", "@01-01"},
	{"christmas eve", "@12-24"},
	{"christmas day", "@12-25"},
	{"christmas", "@12-25"},
	{"boxing day", "@12-26"},
	{"valentine's day", "@02-14"},
	{"valentines day", "@02-14"},
	{"halloween", "@10-31"},
	{"st patrick's day", "@03-17"},
	{"paddy's day", "@03-17"},
	// The holidays of the businesses' countries (GB, IE, AU, US, DE, FR,
	// ES, NL), fixed and movable, in English; the other languages' names
	// are with their language below.
	{"australia day", "@01-26"},
	{"anzac day", "@04-25"},
	{"independence day", "@07-04"},
	{"fourth of july", "@07-04"},
	{"4th of july", "@07-04"},
	{"st stephen's day", "@12-26"},
	{"st. stephen's day", "@12-26"},
	{"hogmanay", "@12-31"},
	{"bonfire night", "@11-05"},
	{"guy fawkes night", "@11-05"},
	{"epiphany", "@01-06"},
	{"twelfth night", "@01-05"},
	{"easter sunday", "@easter"},
	{"easter monday", "@eastermonday"},
	// A holiday season is no one day: "the Easter holidays", "Osterferien".
	{"easter holidays", "easter holidays"},
	{"easter holiday", "easter holiday"},
	{"easter break", "easter break"},
	{"easter weekend", "easter weekend"},
	{"easter hols", "easter hols"},
	{"christmas holidays", "christmas holidays"},
	{"christmas break", "christmas break"},
	{"christmas period", "christmas period"},
	{"vacances de pâques", "vacances de pâques"},
	{"vacances de noël", "vacances de noël"},
	{"vacaciones de pascua", "vacaciones de pascua"},
	{"vacaciones de navidad", "vacaciones de navidad"},
	{"easter", "@easter"},
	{"good friday", "@goodfriday"},
	{"maundy thursday", "@maundythursday"},
	{"holy thursday", "@maundythursday"},
	{"shrove tuesday", "@shrovetuesday"},
	{"pancake day", "@shrovetuesday"},
	{"ash wednesday", "@ashwednesday"},
	{"mothering sunday", "@motheringsunday"},
	// Mother's and Father's Day fall on different days from country to
	// country; movableDay places them by the business's.
	{"mother's day", "@mothersday"},
	{"mothers day", "@mothersday"},
	{"mother's - day", "@mothersday"},
	{"father's day", "@fathersday"},
	{"fathers day", "@fathersday"},
	{"muttertag", "@mothersday"},
	{"vatertag", "@fathersday"},
	{"fête des mères", "@mothersday"},
	{"fête des pères", "@fathersday"},
	{"día de la madre", "@mothersday"},
	{"día del padre", "@fathersday"},
	{"moederdag", "@mothersday"},
	{"vaderdag", "@fathersday"},
	{"ascension day", "@ascension"},
	{"whit sunday", "@whitsun"},
	{"whitsunday", "@whitsun"},
	{"whit monday", "@whitmonday"},
	{"whitsun", "@whitsun"},
	{"pentecost", "@whitsun"},
	{"thanksgiving day", "@thanksgiving"},
	{"thanksgiving", "@thanksgiving"},
	{"memorial day", "@memorialday"},
	{"labor day", "@laborday"},

	// Greetings and wishes that name a part of the day or the weekend.
	{"buenos días", "hello"},
	{"buenos dias", "hello"},
	{"buenas tardes", "hello"},
	{"buenas noches", "hello"},
	{"bonne soirée", "hello"},
	{"bonne journée", "hello"},
	{"bon après - midi", "hello"},
	{"bon week - end", "hello"},
	{"bon weekend", "hello"},
	{"schönen abend", "hello"},
	{"schönes wochenende", "hello"},
	{"goede morgen", "hello"},
	{"fijn weekend", "hello"},
	{"fijne avond", "hello"},

	// German
	{"ersten woche im #mon", "first week of $3"},
	{"erste woche im #mon", "first week of $3"},
	{"letzten woche im #mon", "last week of $3"},
	{"letzte woche im #mon", "last week of $3"},
	{"späten nachmittag", "late afternoon"},
	{"spätnachmittags", "late afternoon"},
	{"guten morgen", "hello"},
	{"guten tag", "hello"},
	{"guten abend", "hello"},
	{"morgen früh", "tomorrow morning"},
	{"erste hälfte", "first half of"},
	{"ersten hälfte", "first half of"},
	{"zweite hälfte", "second half of"},
	{"zweiten hälfte", "second half of"},
	{"den #wd danach", "the $1 after"},
	{"am ostermontag", "@eastermonday"},
	{"am karfreitag", "@goodfriday"},
	{"am pfingstmontag", "@whitmonday"},
	{"den #wd darauf", "the $1 after"},
	{"den #wd davor", "the $1 before"},
	{"den danach", "the one after"},
	{"den darauf", "the one after"},
	{"den tag danach", "the day after"},
	{"nach feierabend", "after work"},
	{"nach der arbeit", "after work"},
	{"spätestens am", "until"},
	{"spätestens um", "until"},
	{"spätestens", "until"},
	{"frühestens am", "starting"},
	{"frühestens ab", "starting"},
	{"frühestens", "starting"},
	{"nicht später als", "until"},
	{"morgen vormittag", "tomorrow morning"},
	{"morgen nachmittag", "tomorrow afternoon"},
	{"morgen abend", "tomorrow evening"},
	{"heute abend", "tonight"},
	{"am morgen", "morning"},
	{"am vormittag", "morning"},
	{"am nachmittag", "afternoon"},
	{"am abend", "evening"},
	{"am wochenende", "this weekend"},
	{"am #wd", "on $1"},
	{"am #n", "the $1"},
	{"am #d", "$1"},
	{"am nächsten #wd", "coming $2"},
	{"am kommenden #wd", "coming $2"},
	{"nächste woche", "next week"},
	{"nächsten woche", "next week"},
	{"nächster woche", "next week"},
	{"kommende woche", "next week"},
	{"kommenden woche", "next week"},
	{"übernächste woche", "weekafter"},
	{"übernächsten woche", "weekafter"},
	{"diese woche", "this week"},
	{"dieser woche", "this week"},
	{"diesen woche", "this week"},
	{"nächstes wochenende", "next weekend"},
	{"nächsten wochenende", "next weekend"},
	{"kommendes wochenende", "next weekend"},
	{"dieses wochenende", "this weekend"},
	{"diesem wochenende", "this weekend"},
	{"nächsten #wd", "coming $1"},
	{"nächster #wd", "coming $1"},
	{"nächste #wd", "coming $1"},
	{"kommenden #wd", "coming $1"},
	{"kommender #wd", "coming $1"},
	{"diesen #wd", "this $1"},
	{"ende des monats", "end of the month"},
	{"ende diesen monats", "end of the month"},
	{"monatsende", "end of the month"},
	{"woche vom", "week of"},
	{"nächsten monats", "next month"},
	{"nächsten monat", "next month"},
	{"nächster monat", "next month"},
	{"kommenden monats", "next month"},
	{"kommenden monat", "next month"},
	{"bis zum", "until the"},
	{"ab dem", "starting the"},
	{"ab #n", "starting $1"},
	{"ab #wd", "starting $1"},
	{"ab #d", "starting $1"},
	{"nach dem", "after the"},
	{"vor dem", "before the"},
	{"vom #n", "from $1"},
	{"von #n", "from $1"},
	{"von #wd", "from $1"},
	{"unter der woche", "weekdays"},
	{"den ganzen tag", "anytime"},
	{"egal wann", "anytime"},
	{"jeden tag", "any day"},
	{"an dem tag", "that day"},
	{"am tag davor", "the day before"},
	{"den tag davor", "the day before"},
	{"am vortag", "the day before"},
	{"am abend davor", "the evening before"},
	{"am tag danach", "the day after"},
	{"in vierzehn tagen", "in two weeks"},
	{"in den nächsten", "in the next"},
	{"innerhalb der nächsten", "within the next"},
	{"in den kommenden", "in the next"},
	{"am wochenende vom", "the weekend of"},
	{"das wochenende vom", "the weekend of"},
	{"wochenende vom", "weekend of"},
	{"in 14 tagen", "in two weeks"},
	{"in 8 tagen", "in one week"},
	{"in einer woche", "in one week"},
	{"heute in einer woche", "a week today"},
	{"heute in 8 tagen", "a week today"},
	{"morgen in einer woche", "a week tomorrow"},
	{"morgen in 8 tagen", "a week tomorrow"},
	{"#wd in einer woche", "$0 week"},
	{"#wd in 8 tagen", "$0 week"},
	{"zwischen jetzt und", "between now and"},
	{"von jetzt bis", "from now until"},
	{"ab jetzt bis", "from now until"},
	{"silvester", "@12-31"},
	{"heiligabend", "@12-24"},
	{"erster weihnachtstag", "@12-25"},
	{"zweiter weihnachtstag", "@12-26"},
	{"neujahr", "@01-01"},
	{"weihnachten", "@12-25"},
	{"ostersonntag", "@easter"},
	{"ostermontag", "@eastermonday"},
	{"ostern", "@easter"},
	{"karfreitag", "@goodfriday"},
	{"gründonnerstag", "@maundythursday"},
	{"christi himmelfahrt", "@ascension"},
	{"himmelfahrt", "@ascension"},
	{"pfingstmontag", "@whitmonday"},
	{"pfingsten", "@whitsun"},
	{"tag der deutschen einheit", "@10-03"},
	{"nikolaustag", "@12-06"},
	{"allerheiligen", "@11-01"},

	// French
	{"première semaine d' #mon", "first week of $3"},
	{"première semaine de #mon", "first week of $3"},
	{"premiere semaine d' #mon", "first week of $3"},
	{"premiere semaine de #mon", "first week of $3"},
	{"dernière semaine d' #mon", "last week of $3"},
	{"dernière semaine de #mon", "last week of $3"},
	{"fin d' après - midi", "late afternoon"},
	{"fin d' apres - midi", "late afternoon"},
	{"fin de l' après - midi", "late afternoon"},
	{"fin de l' apres - midi", "late afternoon"},
	{"après - demain", "overmorrow"},
	{"apres - demain", "overmorrow"},
	{"après - midi", "afternoon"},
	{"apres - midi", "afternoon"},
	{"aujourd'hui", "today"},
	{"ce soir", "tonight"},
	{"demain matin", "tomorrow morning"},
	{"demain soir", "tomorrow evening"},
	{"la semaine prochaine", "next week"},
	{"semaine prochaine", "next week"},
	{"la semaine d' après", "weekafter"},
	{"cette semaine", "this week"},
	{"ce week - end", "this weekend"},
	{"ce weekend", "this weekend"},
	{"le week - end prochain", "next weekend"},
	{"week - end prochain", "next weekend"},
	{"le weekend prochain", "next weekend"},
	{"weekend prochain", "next weekend"},
	{"week - end", "weekend"},
	{"week - ends", "weekends"},
	{"#wd prochain", "coming $0"},
	{"#wd prochaine", "coming $0"},
	{"le #wd", "on $1"},
	{"les #wd", "every $1"},
	{"tous les #wd", "every $2"},
	{"ce #wd", "this $1"},
	{"en semaine", "weekdays"},
	{"n' importe quel jour", "any day"},
	{"n' importe quand", "anytime"},
	{"toute la journée", "anytime"},
	{"dans quinze jours", "in two weeks"},
	{"dans les #n prochains jours", "in the next $2 days"},
	{"dans les #n jours", "in the next $2 days"},
	{"d' ici #n jours", "in the next $2 days"},
	{"le week - end du", "the weekend of"},
	{"au plus tard le", "until the"},
	{"au plus tard", "until"},
	{"après le travail", "after work"},
	{"en fin de journée", "late afternoon"},
	{"le weekend du", "the weekend of"},
	{"dans 8 jours", "in one week"},
	{"aujourd'hui en huit", "a week today"},
	{"demain en huit", "a week tomorrow"},
	{"#wd en huit", "$0 week"},
	{"le #wd en huit", "on $1 week"},
	{"#wd en quinze", "a fortnight on $0"},
	{"le #wd en quinze", "a fortnight on $1"},
	{"entre maintenant et", "between now and"},
	{"d' ici #wd", "between now and $2"},
	{"d' ici à #wd", "between now and $3"},
	{"d' ici le", "between now and the"},
	{"d' ici au", "between now and the"},
	{"d' ici la fin du mois", "between now and end of the month"},
	// "au" between two days of a range is "to": "du lundi 4 au vendredi
	// 8", "du 4 janvier au 8 janvier".
	{"#n au #wd", "$0 to $2"},
	{"#n au #n", "$0 to $2"},
	{"#mon au #wd", "$0 to $2"},
	{"#mon au #n", "$0 to $2"},
	{"fin du mois prochain", "end of next month"},
	{"début du mois prochain", "early of next month"},
	{"debut du mois prochain", "early of next month"},
	{"mi - mois prochain", "mid next month"},
	{"le mois prochain", "next month"},
	{"du mois prochain", "of next month"},
	{"mois prochain", "next month"},
	{"semaine du", "week of the"},
	{"soir de semaine", "weekday evening"},
	{"soirs de semaine", "weekday evening"},
	{"soirées de semaine", "weekday evening"},
	{"de #n à #n", "from $1 to $3"},
	{"de #n a #n", "from $1 to $3"},
	{"fin du mois", "end of the month"},
	{"fin de mois", "end of the month"},
	{"début du mois", "early of the month"},
	{"jusqu' au", "until the"},
	{"jusqu' à", "until"},
	{"à partir du", "starting the"},
	{"à partir de", "starting"},
	{"a partir du", "starting the"},
	{"dès le", "starting the"},
	{"avant le", "before the"},
	{"après le", "after the"},
	{"entre le", "between the"},
	{"du #n au #n", "from $1 to $3"},
	{"du #wd au #wd", "from $1 to $3"},
	{"de #wd à #wd", "from $1 to $3"},
	{"du #n", "from $1"},
	{"du #wd", "from $1"},
	{"le #n", "the $1"},
	{"la veille au soir", "the evening before"},
	{"la veille", "the day before"},
	{"le lendemain", "the day after"},
	{"le matin même", "that morning"},
	{"le soir même", "that evening"},
	{"le jour même", "that day"},
	{"ce jour - là", "that day"},
	{"le matin", "morning"},
	{"en soirée", "evening"},
	{"mi - #mon", "mid $2"},
	{"me marie", "married"},
	{"se marie", "married"},
	{"nous marions", "married"},
	{"la saint - sylvestre", "@12-31"},
	{"saint - sylvestre", "@12-31"},
	{"réveillon de noël", "@12-24"},
	{"réveillon du nouvel an", "@12-31"},
	{"noël", "@12-25"},
	{"le #wd suivant", "the $1 after"},
	{"le #wd d' après", "the $1 after"},
	{"le #wd précédent", "the $1 before"},
	{"le #wd d' avant", "the $1 before"},
	{"celui d' après", "the one after"},
	{"celui qui suit", "the one after"},
	{"le suivant", "the one after"},
	{"la première quinzaine de", "first half of"},
	{"première quinzaine de", "first half of"},
	{"la deuxième quinzaine de", "second half of"},
	{"deuxième quinzaine de", "second half of"},
	{"la seconde quinzaine de", "second half of"},
	{"seconde quinzaine de", "second half of"},
	{"la première moitié de", "first half of"},
	{"la deuxième moitié de", "second half of"},
	{"la seconde moitié de", "second half of"},
	{"noel", "@12-25"},
	{"lundi de pâques", "@eastermonday"},
	{"le lundi de pâques", "@eastermonday"},
	{"le lundi de pentecôte", "@whitmonday"},
	{"le vendredi saint", "@goodfriday"},
	{"pâques", "@easter"},
	{"paques", "@easter"},
	{"vendredi saint", "@goodfriday"},
	{"l' ascension", "@ascension"},
	{"lundi de pentecôte", "@whitmonday"},
	{"pentecôte", "@whitsun"},
	{"la toussaint", "@11-01"},
	{"toussaint", "@11-01"},
	{"le 14 juillet", "@07-14"},
	{"fête nationale", "@07-14"},
	{"mardi gras", "@shrovetuesday"},
	{"jour de l' an", "@01-01"},
	{"nouvel an", "@01-01"},
	{"la saint - valentin", "@02-14"},

	// Spanish
	{"primera semana de #mon", "first week of $3"},
	{"última semana de #mon", "last week of $3"},
	{"ultima semana de #mon", "last week of $3"},
	{"última hora de la tarde", "late afternoon"},
	{"ultima hora de la tarde", "late afternoon"},
	{"pasado mañana", "overmorrow"},
	{"esta noche", "tonight"},
	{"mañana por la mañana", "tomorrow morning"},
	{"mañana por la tarde", "tomorrow afternoon"},
	{"mañana por la noche", "tomorrow evening"},
	{"por la mañana", "morning"},
	{"por las mañanas", "morning"},
	{"de la mañana", "morning"},
	{"la mañana", "morning"},
	{"las mañanas", "morning"},
	{"por la tarde", "afternoon"},
	{"por las tardes", "afternoon"},
	{"de la tarde", "afternoon"},
	{"por la noche", "evening"},
	{"por las noches", "evening"},
	{"de la noche", "evening"},
	{"la semana que viene", "next week"},
	{"semana que viene", "next week"},
	{"la próxima semana", "next week"},
	{"próxima semana", "next week"},
	{"la semana próxima", "next week"},
	{"semana próxima", "next week"},
	{"esta semana", "this week"},
	{"este fin de semana", "this weekend"},
	{"el fin de semana que viene", "next weekend"},
	{"el próximo fin de semana", "next weekend"},
	{"próximo fin de semana", "next weekend"},
	{"el fin de semana", "this weekend"},
	{"fin de semana", "weekend"},
	{"fines de semana", "weekends"},
	{"entre semana", "weekdays"},
	{"el próximo #wd", "coming $2"},
	{"el #wd que viene", "coming $1"},
	{"el #wd próximo", "coming $1"},
	{"próximo #wd", "coming $1"},
	{"este #wd", "this $1"},
	{"todos los #wd", "every $2"},
	{"los #wd", "every $1"},
	{"el #wd", "on $1"},
	{"el #n", "the $1"},
	{"cualquier día", "any day"},
	{"cada mañana", "every morning"},
	{"todo el día", "anytime"},
	{"dentro de", "in"},
	{"en dos semanas", "in two weeks"},
	{"en una semana", "in one week"},
	{"dentro de una semana", "in one week"},
	{"entre hoy y", "between today and"},
	{"de aquí al", "between now and the"},
	{"de aqui al", "between now and the"},
	{"del #wd al #wd", "from $1 to $3"},
	// "al" between two days of a range is "to": "del lunes 4 al viernes
	// 8", "del 4 de enero al 8 de enero".
	{"#n al #wd", "$0 to $2"},
	{"#n al #n", "$0 to $2"},
	{"#mon al #wd", "$0 to $2"},
	{"#mon al #n", "$0 to $2"},
	{"a principios del", "early of"},
	{"a mediados del", "mid of"},
	{"a finales del", "end of"},
	{"el mes que viene", "next month"},
	{"mes que viene", "next month"},
	{"el próximo mes", "next month"},
	{"próximo mes", "next month"},
	{"semana del", "week of the"},
	{"a principios de", "early of"},
	{"a mediados de", "mid of"},
	{"a finales de", "end of"},
	{"a fin de mes", "end of the month"},
	{"a final de mes", "end of the month"},
	{"a finales de mes", "end of the month"},
	{"fin de mes", "end of the month"},
	{"final de mes", "end of the month"},
	{"del #n al #n", "from $1 to $3"},
	{"de #wd a #wd", "from $1 to $3"},
	{"del #n", "from $1"},
	{"a partir del", "starting the"},
	{"a partir de las", "starting"},
	{"a partir de", "starting"},
	{"hasta el", "until the"},
	{"hasta las", "until"},
	{"antes del", "before the"},
	{"antes de las", "before"},
	{"antes de", "before"},
	{"después del", "after the"},
	{"después de las", "after"},
	{"después de", "after"},
	{"entre el", "between the"},
	{"entre las", "between"},
	{"y el", "and the"},
	{"y las", "and"},
	{"o el", "or the"},
	{"dentro de quince días", "in two weeks"},
	{"como muy tarde el", "until the"},
	{"como muy tarde", "until"},
	{"a más tardar el", "until the"},
	{"a más tardar", "until"},
	{"después del trabajo", "after work"},
	{"dentro de quince dias", "in two weeks"},
	{"en quince días", "in two weeks"},
	{"en los próximos #n días", "in the next $3 days"},
	{"en los proximos #n dias", "in the next $3 days"},
	{"el fin de semana del", "the weekend of the"},
	{"o el siguiente", "or the one after"},
	{"o el de después", "or the one after"},
	{"o el #wd siguiente", "or the $2 after"},
	{"o el #wd anterior", "or the $2 before"},
	{"el lunes de pascua", "@eastermonday"},
	{"el viernes santo", "@goodfriday"},
	{"el jueves santo", "@maundythursday"},
	{"el domingo de pascua", "@easter"},
	{"sobre las", "around"},
	{"hacia las", "around"},
	{"a las", "at"},
	{"ese día", "that day"},
	{"esa noche", "that night"},
	{"el día antes", "the day before"},
	{"el día anterior", "the day before"},
	{"la víspera", "the day before"},
	{"la noche anterior", "the evening before"},
	{"la noche antes", "the evening before"},
	{"el día siguiente", "the day after"},
	{"el día después", "the day after"},
	{"si no", "otherwise"},
	{"año nuevo", "@01-01"},
	{"el #wd siguiente", "the $1 after"},
	{"el #wd de después", "the $1 after"},
	{"el #wd anterior", "the $1 before"},
	{"el #wd de antes", "the $1 before"},
	{"el siguiente", "the one after"},
	{"el de después", "the one after"},
	{"la primera quincena de", "first half of"},
	{"primera quincena de", "first half of"},
	{"la segunda quincena de", "second half of"},
	{"segunda quincena de", "second half of"},
	{"la primera mitad de", "first half of"},
	{"la segunda mitad de", "second half of"},
	{"día de reyes", "@01-06"},
	{"los reyes", "@01-06"},
	{"reyes", "@01-06"},
	{"san josé", "@03-19"},
	{"san jose", "@03-19"},
	{"domingo de pascua", "@easter"},
	{"domingo de resurrección", "@easter"},
	{"viernes santo", "@goodfriday"},
	{"jueves santo", "@maundythursday"},
	{"lunes de pascua", "@eastermonday"},
	{"pascua", "@easter"},
	{"todos los santos", "@11-01"},
	{"día de la hispanidad", "@10-12"},
	{"el pilar", "@10-12"},

	// Dutch
	{"ergens voor", "before"},
	{"nog voor", "before"},
	{"vóór", "before"},
	{"eerste week van #mon", "first week of $3"},
	{"laatste week van #mon", "last week of $3"},
	{"laat in de middag", "late afternoon"},
	{"eind van de middag", "late afternoon"},
	{"einde van de middag", "late afternoon"},
	{"morgenochtend", "tomorrow morning"},
	{"morgenmiddag", "tomorrow afternoon"},
	{"morgenavond", "tomorrow evening"},
	{"' s ochtends", "morning"},
	{"' s morgens", "morning"},
	{"' s middags", "afternoon"},
	{"' s avonds", "evening"},
	{"' s nachts", "night"},
	{"tussen de middag", "lunchtime"},
	{"volgende week", "next week"},
	{"komende week", "next week"},
	{"volgend week", "next week"},
	{"deze week", "this week"},
	{"dit weekend", "this weekend"},
	{"volgend weekend", "next weekend"},
	{"volgende weekend", "next weekend"},
	{"komend weekend", "next weekend"},
	{"volgende #wd", "coming $1"},
	{"komende #wd", "coming $1"},
	{"aanstaande #wd", "coming $1"},
	{"deze #wd", "this $1"},
	{"op #wd", "on $1"},
	{"door de week", "weekdays"},
	{"de hele dag", "anytime"},
	{"elke dag", "any day"},
	{"over twee weken", "in two weeks"},
	{"over veertien dagen", "in two weeks"},
	{"over een week", "in one week"},
	{"vandaag over een week", "a week today"},
	{"morgen over een week", "a week tomorrow"},
	{"#wd over een week", "$0 week"},
	{"op #wd over een week", "on $1 week"},
	{"tussen nu en", "between now and"},
	{"van nu tot", "from now until"},
	{"vanaf nu tot", "from now until"},
	{"eind van de maand", "end of the month"},
	{"einde van de maand", "end of the month"},
	{"eind deze maand", "end of the month"},
	{"volgende maand", "next month"},
	{"komende maand", "next month"},
	{"begin volgende maand", "early next month"},
	{"half volgende maand", "mid next month"},
	{"midden volgende maand", "mid next month"},
	{"eind volgende maand", "end next month"},
	{"einde volgende maand", "end next month"},
	{"over #n dagen", "in $1 days"},
	{"over #n weken", "in $1 weeks"},
	{"begin #mon", "early $1"},
	{"half #mon", "mid $1"},
	{"midden #mon", "mid $1"},
	{"eind #mon", "end $1"},
	{"einde #mon", "end $1"},
	{"in de week van", "in the week of"},
	{"de week van", "the week of"},
	{"week van", "week of"},
	{"tussen #n en #n", "between $1 and $3"},
	{"tussen #wd en #wd", "between $1 and $3"},
	{"tot en met", "through"},
	{"uiterlijk op", "until"},
	{"uiterlijk om", "until"},
	{"uiterlijk", "until"},
	{"op zijn vroegst", "starting"},
	{"niet later dan", "until"},
	{"t / m", "through"},
	{"van #n", "from $1"},
	{"van #wd", "from $1"},
	{"voor #n", "before $1"},
	{"voor de #n", "before the $2"},
	{"na de #n", "after the $2"},
	{"vanaf de #n", "starting the $2"},
	{"voor #d", "before $1"},
	{"voor #wd", "before $1"},
	{"na #n", "after $1"},
	{"na #wd", "after $1"},
	{"de #ord", "the $1"},
	{"die dag", "that day"},
	{"de dag ervoor", "the day before"},
	{"de avond ervoor", "the evening before"},
	{"de dag erna", "the day after"},
	{"de #wd erna", "the $1 after"},
	{"de #wd daarna", "the $1 after"},
	{"de #wd ervoor", "the $1 before"},
	{"de #wd daarvoor", "the $1 before"},
	{"die erna", "the one after"},
	{"die daarna", "the one after"},
	{"de week erna", "the week after"},
	{"de week ervoor", "the week before"},
	{"zo niet", "otherwise"},
	{"oudejaarsavond", "@12-31"},
	{"kerstavond", "@12-24"},
	{"eerste kerstdag", "@12-25"},
	{"tweede kerstdag", "@12-26"},
	{"kerstmis", "@12-25"},
	{"nieuwjaarsdag", "@01-01"},
	{"koningsdag", "@04-27"},
	{"de eerste helft van", "first half of"},
	{"het weekend van", "the weekend of"},
	{"in het weekend", "this weekend"},
	{"na het werk", "after work"},
	{"na werktijd", "after work"},
	{"in de komende #n dagen", "in the next $3 days"},
	{"de komende #n dagen", "in the next $2 days"},
	{"binnen #n dagen", "within $1 days"},
	{"eerste helft van", "first half of"},
	{"de tweede helft van", "second half of"},
	{"tweede helft van", "second half of"},
	{"bevrijdingsdag", "@05-05"},
	{"sinterklaasavond", "@12-05"},
	{"pakjesavond", "@12-05"},
	{"sinterklaas", "@12-05"},
	{"kerst", "@12-25"},
	{"eerste paasdag", "@easter"},
	{"tweede paasdag", "@eastermonday"},
	{"paaszondag", "@easter"},
	{"paasmaandag", "@eastermonday"},
	{"pasen", "@easter"},
	{"goede vrijdag", "@goodfriday"},
	{"hemelvaartsdag", "@ascension"},
	{"hemelvaart", "@ascension"},
	{"tweede pinksterdag", "@whitmonday"},
	{"pinksteren", "@whitsun"},
})

// words are the single words rewritten wherever they stand.
var words1 = map[string]string{
	// German
	"heute": "today", "morgen": "tomorrow", "übermorgen": "overmorrow", "gestern": "yesterday",
	"woche": "week", "wochen": "weeks", "wochenende": "weekend", "wochenenden": "weekends",
	"wochentags": "weekdays", "werktags": "weekdays", "tag": "day", "tage": "days", "tagen": "days",
	"monat": "month", "monats": "month", "und": "and", "oder": "or", "bis": "until", "zwischen": "between",
	"nach": "after", "vor": "before", "vom": "from", "ab": "starting", "außer": "except", "ausser": "except",
	"nicht": "not", "jeden": "every", "jedem": "every", "jede": "every", "jeder": "every",
	"anfang": "early", "mitte": "mid", "ende": "end", "vormittag": "morning", "vormittags": "morning",
	"morgens": "morning", "nachmittag": "afternoon", "nachmittags": "afternoon", "abend": "evening",
	"abends": "evening", "mittags": "lunchtime", "mittag": "noon", "um": "at", "gegen": "around",
	"dem": "the", "den": "the", "der": "the", "letzte": "last", "letzten": "last", "letzter": "last",
	"letztes": "last", "vorige": "last", "vorigen": "last", "vergangene": "last", "vergangenen": "last",
	"seit": "since", "war": "was", "waren": "was", "hatte": "had", "hatten": "had",
	"geburtstag": "birthday", "hochzeit": "wedding", "urlaub": "holiday", "sonst": "otherwise",
	"ansonsten": "otherwise", "zwei": "two", "drei": "three", "vier": "four",
	// French
	"demain": "tomorrow", "hier": "yesterday", "semaine": "week", "semaines": "weeks", "weekend": "weekend",
	"jour": "day", "jours": "days", "mois": "month", "et": "and", "ou": "or", "entre": "between",
	"avant": "before", "après": "after", "apres": "after", "sauf": "except", "pas": "not", "chaque": "every",
	"début": "early", "debut": "early", "fin": "end", "matin": "morning", "matinée": "morning",
	"matinee": "morning", "aprem": "afternoon", "aprèm": "afternoon", "aprème": "afternoon", "soir": "evening", "soirée": "evening", "soiree": "evening", "midi": "noon",
	"vers": "around", "à": "at", "dès": "starting", "dernier": "last", "dernière": "last", "derniere": "last",
	"depuis": "since", "était": "was", "étais": "was", "avais": "had", "avait": "had",
	"anniversaire": "birthday", "mariage": "wedding", "vacances": "holiday", "sinon": "otherwise",
	"dans": "in", "deux": "two", "trois": "three", "quatre": "four",
	// Spanish
	"hoy": "today", "mañana": "tomorrow", "manana": "tomorrow", "ayer": "yesterday", "semana": "week",
	"semanas": "weeks", "día": "day", "dia": "day", "días": "days", "dias": "days", "mes": "month",
	"y": "and", "o": "or", "hasta": "until", "excepto": "except", "salvo": "except", "menos": "except",
	"cada": "every", "principios": "early", "mediados": "mid", "finales": "end", "tarde": "afternoon",
	"tardes": "afternoon", "noche": "evening", "noches": "evening", "mediodía": "noon", "mediodia": "noon",
	"pasado": "last", "pasada": "last", "hace": "ago", "fue": "was", "estuve": "was",
	"cumpleaños": "birthday", "boda": "wedding", "aniversario": "anniversary", "vacaciones": "holiday",
	"nochevieja": "@12-31", "nochebuena": "@12-24", "navidad": "@12-25", "dos": "two", "tres": "three",
	"cuatro": "four",
	// Dutch
	"vandaag": "today", "overmorgen": "overmorrow", "gisteren": "yesterday", "vanavond": "tonight",
	"weken": "weeks", "dag": "day", "dagen": "days", "maand": "month", "tot": "until", "tussen": "between",
	"vanaf": "starting", "behalve": "except", "niet": "not", "elke": "every", "iedere": "every",
	"ochtend": "morning", "ochtends": "morning", "ochtenden": "morning", "middag": "afternoon",
	"middags": "afternoon", "avond": "evening", "avonds": "evening", "avonden": "evening", "om": "at",
	"rond": "around", "omstreeks": "around", "doordeweeks": "weekdays", "doordeweekse": "weekday",
	"afgelopen": "last", "sinds": "since", "geleden": "ago", "verjaardag": "birthday", "jarig": "birthday",
	"bruiloft": "wedding", "vakantie": "holiday", "anders": "otherwise", "twee": "two", "drie": "three",
}

func buildPhrases(rules [][2]string) map[string][]phrase {
	out := map[string][]phrase{}
	for _, r := range rules {
		p := phrase{pat: strings.Fields(r[0]), out: strings.Fields(r[1])}
		out[p.pat[0]] = append(out[p.pat[0]], p)
	}
	for k, ps := range out {
		// Longest first, so that "la semaine prochaine" wins over "semaine".
		for i := 1; i < len(ps); i++ {
			for j := i; j > 0 && len(ps[j].pat) > len(ps[j-1].pat); j-- {
				ps[j], ps[j-1] = ps[j-1], ps[j]
			}
		}
		out[k] = ps
	}
	return out
}

// class names the pattern word a token can match besides its own word.
func class(t tok) string {
	switch {
	case t.kind == 'n' && t.ord && !t.word:
		return "#ord"
	case t.kind == 'd':
		return "#d"
	case t.kind == 'n' && !t.word:
		return "#n"
	case t.kind == 'w':
		if _, _, ok := weekdayOf(t.w); ok {
			return "#wd"
		}
		if _, ok := months[t.w]; ok {
			return "#mon"
		}
	}
	return ""
}

func (p phrase) matches(ts []tok, i int) bool {
	if i+len(p.pat) > len(ts) {
		return false
	}
	for k, w := range p.pat {
		t := ts[i+k]
		if c := class(t); t.w != w && c != w && !(w == "#n" && c == "#ord") {
			return false
		}
	}
	return true
}

// canonical rewrites ts into the grammar's vocabulary (see the top of
// this file). Every token made keeps the text span of what it replaced.
func canonical(ts []tok) []tok {
	ts = spokenClock(weekdayParts(monthWeeks(countedNumbers(ts))))
	out := make([]tok, 0, len(ts))
	for i := 0; i < len(ts); {
		t := ts[i]
		cands := phrases[t.w]
		if c := class(t); c != "" {
			cands = append(append([]phrase(nil), cands...), phrases[c]...)
			if c == "#ord" {
				cands = append(cands, phrases["#n"]...)
			}
		}
		done := false
		for _, p := range cands {
			if !p.matches(ts, i) {
				continue
			}
			span := tok{from: ts[i].from, to: ts[i+len(p.pat)-1].to, space: t.space}
			for _, o := range p.out {
				out = append(out, rewritten(o, ts[i:i+len(p.pat)], span))
			}
			i += len(p.pat)
			done = true
			break
		}
		if done {
			continue
		}
		if w, ok := words1[t.w]; ok && t.kind == 'w' {
			out = append(out, rewritten(w, ts[i:i+1], tok{from: t.from, to: t.to, space: t.space}))
		} else {
			out = append(out, t)
		}
		i++
	}
	return pluralDayParts(reorderWeekWeekday(compoundOrdinals(out)))
}

// pluralParts are the parts of the day said of every week ("Tuesday
// evenings"), with their singular.
var pluralParts = map[string]string{
	"evenings": "evening", "mornings": "morning", "afternoons": "afternoon", "nights": "night",
	"lunchtimes": "lunchtime",
}

// pluralDayParts reads "Tuesday evenings" and "Saturday mornings" as
// "Tuesdays evening": a weekday with a plural part of the day is a weekly
// pattern, as "Tuesdays" is, not the coming Tuesday.
func pluralDayParts(ts []tok) []tok {
	for i := 0; i+1 < len(ts); i++ {
		one, ok := pluralParts[ts[i+1].w]
		if !ok {
			continue
		}
		if _, plural, isDay := weekdayOf(ts[i].w); isDay && !plural {
			if _, known := weekdays[ts[i].w+"s"]; known {
				continue
			}
			ts[i].w += "s"
			ts[i+1].w = one
		}
	}
	return ts
}

// monthWeeks splits the German compound "Aprilwoche" into "Woche im
// April", so that "in der ersten Aprilwoche" reads as "in der ersten
// Woche im April".
func monthWeeks(ts []tok) []tok {
	var out []tok
	for i, t := range ts {
		m, ok := strings.CutSuffix(t.w, "woche")
		if _, isMonth := months[m]; !ok || !isMonth || t.kind != 'w' {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append([]tok(nil), ts[:i]...)
		}
		for k, w := range []string{"woche", "im", m} {
			part := tok{w: w, kind: 'w', clock: -1, space: t.space || k > 0, from: t.from, to: t.to}
			out = append(out, part)
		}
	}
	if out == nil {
		return ts
	}
	return out
}

// spokenClock writes the clock times people spell out as the grammar's
// "4:30": "half past four", "quarter past 4", "quarter to five", and the
// British "half four". The hour stays without am or pm, for the grammar
// to settle as it settles "4:30".
func spokenClock(ts []tok) []tok {
	hourAt := func(k int) (int, bool) {
		if k >= len(ts) {
			return 0, false
		}
		t := ts[k]
		if t.kind == 'n' && !t.ord && t.clock < 0 && t.ampm == 0 && t.n >= 1 && t.n <= 12 && len(t.w) <= 2 {
			return t.n, true
		}
		if n, ok := clockNumbers[t.w]; ok && t.kind == 'w' {
			return n, true
		}
		return 0, false
	}
	var out []tok
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		h, m, n := 0, -1, 0
		switch {
		case (t.w == "half" || t.w == "quarter") && i+2 < len(ts) && ts[i+1].w == "past":
			if x, ok := hourAt(i + 2); ok {
				h, m, n = x, 30, 3
				if t.w == "quarter" {
					m = 15
				}
			}
		case t.w == "quarter" && i+2 < len(ts) && ts[i+1].w == "to":
			if x, ok := hourAt(i + 2); ok {
				h, m, n = x-1, 45, 3
				if h == 0 {
					h = 12
				}
			}
		case t.w == "half" && (i == 0 || ts[i-1].w != "a" && ts[i-1].w != "and") && i+1 < len(ts):
			// "half four" is 4:30 in Britain; "half term", "a half day" are not times.
			if x, ok := hourAt(i + 1); ok && (i+2 >= len(ts) || !countUnits[ts[i+2].w] && !unitWords[ts[i+2].w]) {
				h, m, n = x, 30, 2
			}
		}
		if m < 0 {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append([]tok(nil), ts[:i]...)
		}
		out = append(out, tok{w: strconv.Itoa(h) + ":" + strconv.Itoa(m), kind: 'n', n: h, clock: h*60 + m, space: t.space, from: t.from, to: ts[i+n-1].to})
		i += n - 1
	}
	if out == nil {
		return ts
	}
	return out
}

// clockNumbers are the hours written as words.
var clockNumbers = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12,
}

// unitWords follow a number that counts something, not an hour.
var unitWords = map[string]bool{"days": true, "day": true, "weeks": true, "week": true, "hours": true, "hour": true, "people": true}

// dayParts are the parts of the day German and Dutch glue to a weekday
// ("Freitagabend", "vrijdagavond", "zaterdagochtend",
// "Samstagvormittag"), in the grammar's words.
var dayParts = map[string]string{
	"abend": "evening", "abends": "evening", "morgen": "morning", "vormittag": "morning", "vormittags": "morning",
	"nachmittag": "afternoon", "nachmittags": "afternoon", "mittag": "lunchtime", "mittags": "lunchtime",
	"nacht": "night", "avond": "evening", "avonden": "evening", "ochtend": "morning", "ochtenden": "morning",
	"middag": "afternoon", "middagen": "afternoon",
}

// weekdayParts splits a weekday glued to a part of the day into the two:
// "vrijdagavond" reads as "vrijdag evening", as "morgenavond" reads as
// "tomorrow evening".
func weekdayParts(ts []tok) []tok {
	var out []tok
	for i, t := range ts {
		wd, part := "", ""
		if t.kind == 'w' {
			for name := range weekdays {
				if rest, ok := strings.CutPrefix(t.w, name); ok && len(name) > 4 && dayParts[rest] != "" {
					wd, part = name, dayParts[rest]
				}
			}
		}
		if wd == "" {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append([]tok(nil), ts[:i]...)
		}
		out = append(out, tok{w: wd, kind: 'w', clock: -1, space: t.space, from: t.from, to: t.to},
			tok{w: part, kind: 'w', clock: -1, space: true, from: t.from, to: t.to})
	}
	if out == nil {
		return ts
	}
	return out
}

// countUnits are the words for days and weeks a number word counts ("in
// zehn Tagen", "dans dix jours", "dentro de diez días", "over tien
// dagen").
var countUnits = map[string]bool{
	"tage": true, "tagen": true, "wochen": true, "jours": true, "semaines": true, "días": true, "dias": true,
	"semanas": true, "dagen": true, "weken": true,
}

// nextWords may stand between a number word and its unit.
var nextWords = map[string]bool{"prochains": true, "prochaines": true, "derniers": true}

// countedNumbers writes a number word of the other languages as its
// digits when a unit of days or weeks follows it, so that the grammar
// counts "in zehn Tagen" as it counts "in 10 days". Elsewhere the words
// stay words: "once" is Spanish eleven and English once, "sept" French
// seven and an English abbreviation.
func countedNumbers(ts []tok) []tok {
	var out []tok
	for i, t := range ts {
		n, ok := foreignNumWords[t.w]
		// "dix prochains jours": the unit may come after "next".
		unit := i+1 < len(ts) && countUnits[ts[i+1].w] || i+2 < len(ts) && nextWords[ts[i+1].w] && countUnits[ts[i+2].w]
		if ok && t.kind == 'w' && unit {
			if out == nil {
				out = append([]tok(nil), ts...)
			}
			out[i] = tok{w: strconv.Itoa(n), kind: 'n', n: n, clock: -1, space: t.space, from: t.from, to: t.to}
		}
	}
	if out == nil {
		return ts
	}
	return out
}

// compoundOrdinals joins "twenty-first" and "thirty first" into one day
// of the month.
func compoundOrdinals(ts []tok) []tok {
	out := ts[:0]
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		if tens := map[string]int{"twenty": 20, "thirty": 30}[t.w]; tens > 0 {
			j := i + 1
			if j < len(ts) && ts[j].w == "-" {
				j++
			}
			if j < len(ts) && ts[j].word && ts[j].n < 10 && tens+ts[j].n <= 31 {
				o := ts[j]
				o.n, o.from, o.space = tens+o.n, t.from, t.space
				out = append(out, o)
				i = j
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// rewritten makes the token o stands for.
func rewritten(o string, matched []tok, span tok) tok {
	if len(o) == 2 && o[0] == '$' {
		t := matched[o[1]-'0']
		return t
	}
	t := tok{w: o, kind: 'w', clock: -1, space: span.space, from: span.from, to: span.to}
	switch {
	case len(o) == 6 && o[0] == '@' && o[3] == '-':
		// A fixed holiday: a date whose order nothing can upset.
		t.kind, t.ymd, t.soft = 'd', true, true
		t.d2, t.d1 = atoi(o[1:3]), atoi(o[4:6])
	case len(o) > 1 && o[0] == '@':
		t.kind, t.ymd, t.soft, t.movable = 'd', true, true, o[1:]
	}
	return t
}

// reorderWeekWeekday turns "next week Tuesday" ("volgende week dinsdag",
// "nächste Woche Dienstag") into the English order "Tuesday next week".
func reorderWeekWeekday(ts []tok) []tok {
	for i := 0; i+2 < len(ts); i++ {
		if (ts[i].w == "next" || ts[i].w == "this") && ts[i+1].w == "week" {
			if _, plural, ok := weekdayOf(ts[i+2].w); ok && !plural {
				wd := ts[i+2]
				copy(ts[i+1:i+3], ts[i:i+2])
				ts[i] = wd
				i += 2
			}
		}
	}
	return ts
}
