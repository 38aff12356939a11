-- The token-level record of each trajectory (issue 12): packed binary arrays, one row per trajectory, deleted with it.
CREATE TABLE "TrajectoryTokens" (
    "trajectoryId" TEXT NOT NULL PRIMARY KEY,
    "n" INTEGER NOT NULL,
    "ids" BLOB NOT NULL,
    "mask" BLOB NOT NULL,
    "turn" BLOB NOT NULL,
    "chars" BLOB NOT NULL,
    "rolloutLogprobs" BLOB NOT NULL,
    "entropy" BLOB NOT NULL,
    "trainerLogprobs" BLOB,
    "weights" BLOB,
    "clip" BLOB,
    "advantage" REAL,
    CONSTRAINT "TrajectoryTokens_trajectoryId_fkey" FOREIGN KEY ("trajectoryId") REFERENCES "Trajectory" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
