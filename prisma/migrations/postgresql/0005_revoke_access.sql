-- Access that can be taken away (issue 24): a disabled user cannot sign in and holds no session or token; a removed
-- user's row stays (credentials deleted) so the runs, recipes and links they made still name their author.
ALTER TABLE "User" ADD COLUMN "disabledAt" TIMESTAMP(3);
ALTER TABLE "User" ADD COLUMN "removedAt" TIMESTAMP(3);
