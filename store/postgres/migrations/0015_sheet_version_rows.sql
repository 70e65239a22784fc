-- 0015: a sheet version keeps what was read, not only its hash. content is
-- the JSON of nextup.SheetContent (every row as read, the header's place,
-- each data row's person and service), for the owner to open a version
-- and compare two; NULL for versions kept before. missing is the JSON
-- list of the sheet's entries whose rows that read did not find, with
-- what became of each (the grace rule: withdrawn only when missing twice
-- running, held back when too many went at once). Both are text, as the
-- other JSON columns are: never parsed by SQL; SheetVersionList reads
-- missing and leaves content out.
ALTER TABLE sheet_versions ADD COLUMN missing text NOT NULL DEFAULT '[]';
ALTER TABLE sheet_versions ADD COLUMN content text;
