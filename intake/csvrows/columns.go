package csvrows

import (
	"strings"
	"unicode"
)

// Field is a field of a waitlist entry that a column can fill. The names
// are the API's (party_size, joined_at), so a problem names the field the
// way the rest of nextup does.
type Field string

// The fields a column can fill.
const (
	FieldName      Field = "name"
	FieldFirstName Field = "first_name" // joined with last_name into name
	FieldLastName  Field = "last_name"
	FieldEmail     Field = "email"
	FieldPhone     Field = "phone"
	FieldService   Field = "service"
	FieldPartySize Field = "party_size"
	FieldEarliest  Field = "earliest"
	FieldLatest    Field = "latest"
	FieldDate      Field = "date" // the earliest; a whole day when there is no latest column
	FieldStaff     Field = "staff"
	FieldNotes     Field = "notes"
	FieldPriority  Field = "priority"
	FieldChannel   Field = "channel"
	FieldJoinedAt  Field = "joined_at"
	// FieldStatus is where the sheet says what became of a row: read,
	// not stored; the sheet mirror writes "Booked …" there when the
	// row's person claims a slot.
	FieldStatus Field = "status"
)

// Fields lists every field a column can fill, in the order a person
// would map a sheet's columns.
var Fields = []Field{FieldName, FieldFirstName, FieldLastName, FieldEmail, FieldPhone, FieldService, FieldPartySize,
	FieldEarliest, FieldLatest, FieldDate, FieldStaff, FieldNotes, FieldPriority, FieldChannel, FieldJoinedAt, FieldStatus}

// ParseField returns the field named name (as Fields writes them).
func ParseField(name string) (Field, bool) {
	for _, f := range Fields {
		if string(f) == name {
			return f, true
		}
	}
	return "", false
}

// Mapping is a person's choice of field for each header cell, by the
// cell's name as the sheet writes it (compared as header names are: no
// case, no punctuation); a cell mapped to "" is left out.
type Mapping map[string]Field

// normalized returns m keyed by normHeader.
func (m Mapping) normalized() map[string]Field {
	out := make(map[string]Field, len(m))
	for h, f := range m {
		out[normHeader(h)] = f
	}
	return out
}

// synonyms are the header names of each field, written naturally and
// compared as normHeader leaves them. English first, then the German,
// French, Spanish and Dutch names a European salon's sheet is likely to use.
var synonyms = map[Field][]string{
	FieldName: {"name", "full name", "customer", "customer name", "client", "client name", "guest name", "contact name", "person",
		"nom", "nom complet", "nombre", "nombre completo", "naam", "kunde", "kundin"},
	FieldFirstName: {"first name", "firstname", "given name", "forename", "vorname", "prénom", "prenom", "voornaam"},
	FieldLastName:  {"last name", "lastname", "surname", "family name", "nachname", "nom de famille", "apellido", "apellidos", "achternaam"},
	FieldEmail: {"email", "e-mail", "email address", "e-mail address", "mail", "e-mail-adresse", "courriel", "adresse e-mail",
		"correo", "correo electrónico", "e-mailadres"},
	FieldPhone: {"phone", "phone number", "mobile", "mobile number", "mobile phone", "cell", "cell phone", "tel", "tel.", "telephone",
		"telephone number", "sms", "contact number", "telefon", "telefonnummer", "handy", "mobil", "mobilnummer", "téléphone",
		"portable", "teléfono", "telefono", "móvil", "movil", "celular", "telefoon", "telefoonnummer", "mobiel", "gsm"},
	FieldService: {"service", "treatment", "service type", "appointment type", "dienstleistung", "behandlung", "leistung",
		"prestation", "soin", "servicio", "tratamiento", "dienst", "behandeling"},
	FieldPartySize: {"party", "party size", "guests", "covers", "people", "pax", "seats", "size", "number of guests", "number of people",
		"personen", "anzahl", "gäste", "personnes", "couverts", "personas", "comensales", "aantal", "aantal personen"},
	FieldEarliest: {"earliest", "from", "start", "after", "earliest date", "from date", "start date", "available from",
		"ab", "von", "à partir de", "desde", "vanaf"},
	FieldLatest: {"latest", "to", "until", "till", "end", "before", "by", "latest date", "to date", "end date", "available until",
		"bis", "jusqu'au", "jusqu'à", "hasta", "tot", "tot en met"},
	FieldDate:  {"date", "day", "datum", "fecha", "jour", "tag", "dag"},
	FieldStaff: {"staff", "with", "stylist", "therapist", "practitioner", "staff member", "preferred staff", "barber", "mitarbeiter", "mitarbeiterin", "employé", "personal", "medewerker"},
	FieldNotes: {"notes", "note", "comments", "comment", "remarks", "notizen", "bemerkungen", "anmerkungen", "remarques",
		"commentaires", "notas", "comentarios", "opmerkingen"},
	FieldPriority: {"priority", "vip", "urgent", "priorität", "priorité", "prioridad", "prioriteit"},
	FieldChannel:  {"channel", "contact by", "contact via", "preferred channel", "contact method", "kanal", "canal", "kanaal"},
	FieldJoinedAt: {"joined", "joined at", "joined on", "added", "added on", "date added", "signed up", "created", "created at",
		"timestamp", "zeitstempel", "horodateur", "marca temporal", "tijdstempel"},
	FieldStatus: {"status", "booking status", "waitlist status", "booked?", "filled", "estado", "statut"},
}

// headerIndex maps a normalised header name to its field.
var headerIndex = func() map[string]Field {
	m := map[string]Field{}
	for f, names := range synonyms {
		for _, n := range names {
			k := normHeader(n)
			if g, dup := m[k]; dup && g != f {
				panic("csvrows: header " + n + " names both " + string(g) + " and " + string(f))
			}
			m[k] = f
		}
	}
	return m
}()

// normHeader lower-cases a header cell, drops a trailing hint in
// parentheses ("Phone (mobile)") and turns every run of other characters
// than letters and digits into one space ("E-mail:" is "e mail").
func normHeader(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, "("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			space = false
			continue
		}
		space = true
	}
	return b.String()
}

// maxHeaderRow is how many rows may come before the header (a title, an
// export date) plus the header itself.
const maxHeaderRow = 10

// Header is the recognised header row of a sheet.
type Header struct {
	Row int // its row number
	// Columns lists, for each field, the indexes of the columns that name
	// it, left to right.
	Columns map[Field][]int
	// Ignored are the header cells that name no field, as written.
	Ignored []string
	score   int // fields recognised, for choosing a separator
}

// Has reports whether a column names f.
func (h Header) Has(f Field) bool { return len(h.Columns[f]) > 0 }

// Field returns the field column col fills, or "".
func (h Header) Field(col int) Field {
	for f, cols := range h.Columns {
		for _, c := range cols {
			if c == col {
				return f
			}
		}
	}
	return ""
}

// FieldNamed is the field a header cell names by itself (its name one of
// the field's synonyms), or "".
func FieldNamed(header string) Field { return headerIndex[normHeader(header)] }

// FindHeader finds the header among recs as Parse does: by the names of
// its cells, or with a mapping (nil for none) by the mapping's. The
// columns it finds are for a person to check and change.
func FindHeader(recs []Record, m Mapping) (Header, bool) {
	if m == nil {
		return findHeader(recs, nil)
	}
	return findHeader(recs, m.normalized())
}

// findHeader returns the first of the first maxHeaderRow records that names
// two fields or more, one of them a person or a way to reach them. With a
// mapping (header names normalised), the names are the mapping's, and a
// row naming one of a person's fields or a way to reach them is enough.
func findHeader(recs []Record, mapping map[string]Field) (Header, bool) {
	for i, rec := range recs {
		if i >= maxHeaderRow {
			break
		}
		if rec.Err != nil {
			continue
		}
		h := Header{Row: rec.Row, Columns: map[Field][]int{}}
		for col, cell := range rec.Cells {
			f, ok := headerIndex[normHeader(cell)]
			if mapping != nil {
				f, ok = mapping[normHeader(cell)]
				ok = ok && f != ""
			}
			if !ok {
				if strings.TrimSpace(cell) != "" {
					h.Ignored = append(h.Ignored, strings.TrimSpace(cell))
				}
				continue
			}
			if !h.Has(f) {
				h.score++
			}
			h.Columns[f] = append(h.Columns[f], col)
		}
		who := h.Has(FieldName) || h.Has(FieldFirstName) || h.Has(FieldLastName) || h.Has(FieldEmail) || h.Has(FieldPhone)
		if (h.score >= 2 || mapping != nil) && who {
			if h.Has(FieldDate) && h.Has(FieldEarliest) {
				// "From" and "Date" both: the date column is left out
				// rather than guessed at.
				for _, col := range h.Columns[FieldDate] {
					h.Ignored = append(h.Ignored, strings.TrimSpace(rec.Cells[col]))
				}
				delete(h.Columns, FieldDate)
			}
			return h, true
		}
	}
	return Header{}, false
}
