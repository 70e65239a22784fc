-- 0017: a person's data on request (export and erasure, and the retention
-- that erases by itself). EntryListByContact finds a person's entries by
-- phone number even when they gave an email too (contact_key is then the
-- email): this index holds each entry's number reduced to its '+' and
-- digits, the form nextup.PhoneDigits compares (the API accepts only
-- digits, '+', spaces and "-()." in a number; imports store E.164). The
-- query repeats the expression and the partial condition exactly.
CREATE INDEX entries_phone ON entries
    (business_id, replace(replace(replace(replace(replace(phone, ' ', ''), '-', ''), '(', ''), ')', ''), '.', ''))
    WHERE phone <> '';
