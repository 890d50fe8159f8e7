-- Migration 6: an approval is for a change from one running version to another. base_version_id
-- is the version that was active when the person was asked (0: none was); ActivateApproved
-- refuses once another version is active, since the card's reasons and diff were worked out
-- against the old one.

ALTER TABLE approvals ADD COLUMN base_version_id INTEGER NOT NULL DEFAULT 0;
