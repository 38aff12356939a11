-- Sign-in failures per account and address in the database (issue 44, requirement 1): growing delays shared by every
-- web server and kept across restarts, in place of a per-process lock on the account.
CREATE TABLE "SignInThrottle" (
    "account" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastFailureAt" DATETIME,
    "lastSuccessAt" DATETIME,
    "expiresAt" DATETIME NOT NULL,

    PRIMARY KEY ("account", "address")
);
CREATE INDEX "SignInThrottle_expiresAt_idx" ON "SignInThrottle"("expiresAt");
