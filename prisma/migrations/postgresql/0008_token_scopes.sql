-- Scoped API tokens (issue 44, requirement 2): read, write or admin; a token acts with the lower of its scope's role
-- and its user's (contracts/access.ts tokenRole). Tokens from before get the scope of their user's role, so nothing
-- they did is refused; new ones default to read.
ALTER TABLE "ApiToken" ADD COLUMN "scope" TEXT NOT NULL DEFAULT 'read';
UPDATE "ApiToken" SET "scope" = CASE (SELECT "role" FROM "User" WHERE "User"."id" = "ApiToken"."userId")
    WHEN 'admin' THEN 'admin' WHEN 'researcher' THEN 'write' ELSE 'read' END;
