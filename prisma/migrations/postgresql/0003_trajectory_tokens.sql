-- The token-level record of each trajectory (issue 12): packed binary arrays, one row per trajectory, deleted with it.
CREATE TABLE "TrajectoryTokens" (
    "trajectoryId" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "ids" BYTEA NOT NULL,
    "mask" BYTEA NOT NULL,
    "turn" BYTEA NOT NULL,
    "chars" BYTEA NOT NULL,
    "rolloutLogprobs" BYTEA NOT NULL,
    "entropy" BYTEA NOT NULL,
    "trainerLogprobs" BYTEA,
    "weights" BYTEA,
    "clip" BYTEA,
    "advantage" DOUBLE PRECISION,

    CONSTRAINT "TrajectoryTokens_pkey" PRIMARY KEY ("trajectoryId")
);

ALTER TABLE "TrajectoryTokens" ADD CONSTRAINT "TrajectoryTokens_trajectoryId_fkey" FOREIGN KEY ("trajectoryId") REFERENCES "Trajectory"("id") ON DELETE CASCADE ON UPDATE CASCADE;
