-- 0014: the version of the business's message templates ("the business's
-- voice") each message was written with; 0 for the defaults, and for
-- messages written before templates were versioned.
ALTER TABLE messages ADD COLUMN template_version integer NOT NULL DEFAULT 0;
