-- Schema version 2: a compare (/bench rocm compare, /profile rocm compare) keeps its A
-- commit, pinned at acceptance like sha (its B), and the most repeats per side it may
-- run. Every other request has '' and 0.
ALTER TABLE requests ADD COLUMN base TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN repeats INTEGER NOT NULL DEFAULT 0;
