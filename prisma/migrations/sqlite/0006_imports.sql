-- Runs trained elsewhere (issue 28): where an imported run's rollouts come from, and how far each of its files has
-- been read (byte offsets, so a follower restarted after a crash goes on from where it stopped).
CREATE TABLE "ImportSource" (
    "runId" TEXT NOT NULL PRIMARY KEY,
    "format" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "frameworkVersion" TEXT,
    "follow" BOOLEAN NOT NULL DEFAULT false,
    "lines" INTEGER NOT NULL DEFAULT 0,
    "trajectories" INTEGER NOT NULL DEFAULT 0,
    "problems" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE "ImportFile" (
    "runId" TEXT NOT NULL,
    "file" TEXT NOT NULL,
    "offset" REAL NOT NULL,
    "line" INTEGER NOT NULL,
    "done" BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY ("runId", "file")
);
