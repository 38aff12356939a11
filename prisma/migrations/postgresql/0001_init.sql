-- Toolsmith initial schema (PostgreSQL). Mirrors prisma/schema.prisma; DateTime columns are TIMESTAMP(3) as Prisma expects,
-- JSON payloads are TEXT.
CREATE TABLE "Recipe" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "parentId" TEXT,
    "spec" TEXT NOT NULL,
    "note" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Recipe_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Recipe_name_version_key" ON "Recipe"("name", "version");

CREATE TABLE "Run" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "recipeId" TEXT,
    "recipeSpec" TEXT NOT NULL,
    "seed" INTEGER NOT NULL,
    "codeVersion" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "stage" INTEGER NOT NULL DEFAULT 0,
    "stageName" TEXT,
    "step" INTEGER NOT NULL DEFAULT 0,
    "totalSteps" INTEGER,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Run_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Run_kind_createdAt_idx" ON "Run"("kind", "createdAt");
CREATE INDEX "Run_status_idx" ON "Run"("status");

CREATE TABLE "Job" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "runId" TEXT,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "maxAttempts" INTEGER NOT NULL DEFAULT 3,
    "leaseOwner" TEXT,
    "leaseExpiresAt" DOUBLE PRECISION,
    "heartbeatAt" DOUBLE PRECISION,
    "runAfter" DOUBLE PRECISION NOT NULL,
    "cancelRequested" BOOLEAN NOT NULL DEFAULT false,
    "result" TEXT,
    "error" TEXT,
    "createdAt" DOUBLE PRECISION NOT NULL,
    "startedAt" DOUBLE PRECISION,
    "finishedAt" DOUBLE PRECISION,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Job_status_runAfter_priority_idx" ON "Job"("status", "runAfter", "priority");
CREATE INDEX "Job_runId_idx" ON "Job"("runId");

CREATE TABLE "MetricPoint" (
    "runId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "step" INTEGER NOT NULL,
    "value" DOUBLE PRECISION NOT NULL,
    "time" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "MetricPoint_pkey" PRIMARY KEY ("runId", "key", "step")
);

CREATE TABLE "RunEvent" (
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "time" DOUBLE PRECISION NOT NULL,
    "level" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" TEXT,

    CONSTRAINT "RunEvent_pkey" PRIMARY KEY ("runId", "seq")
);

CREATE TABLE "Trajectory" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "step" INTEGER NOT NULL,
    "stage" INTEGER NOT NULL,
    "split" TEXT NOT NULL DEFAULT 'train',
    "problemId" TEXT,
    "groupId" TEXT NOT NULL,
    "sampleIndex" INTEGER NOT NULL,
    "reward" DOUBLE PRECISION NOT NULL,
    "correct" BOOLEAN,
    "selected" BOOLEAN NOT NULL DEFAULT false,
    "selectReason" TEXT,
    "pErr" DOUBLE PRECISION,
    "pFormat" DOUBLE PRECISION,
    "promptTokens" INTEGER NOT NULL DEFAULT 0,
    "responseTokens" INTEGER NOT NULL DEFAULT 0,
    "toolTokens" INTEGER NOT NULL DEFAULT 0,
    "turns" INTEGER NOT NULL DEFAULT 0,
    "toolCalls" INTEGER NOT NULL DEFAULT 0,
    "toolErrors" INTEGER NOT NULL DEFAULT 0,
    "finishReason" TEXT NOT NULL,
    "answer" TEXT,
    "content" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Trajectory_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Trajectory_runId_step_groupId_sampleIndex_idx" ON "Trajectory"("runId", "step", "groupId", "sampleIndex");
CREATE INDEX "Trajectory_runId_problemId_step_idx" ON "Trajectory"("runId", "problemId", "step");

CREATE TABLE "ToolCall" (
    "id" TEXT NOT NULL,
    "trajectoryId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "step" INTEGER NOT NULL,
    "turn" INTEGER NOT NULL,
    "code" TEXT NOT NULL,
    "stdin" TEXT NOT NULL DEFAULT '',
    "stdout" TEXT NOT NULL DEFAULT '',
    "stderr" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL,
    "exitCode" INTEGER,
    "errorType" TEXT,
    "queuedAt" DOUBLE PRECISION,
    "startedAt" DOUBLE PRECISION,
    "finishedAt" DOUBLE PRECISION,
    "durationMs" DOUBLE PRECISION,
    "queueMs" DOUBLE PRECISION,

    CONSTRAINT "ToolCall_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "ToolCall_trajectoryId_turn_idx" ON "ToolCall"("trajectoryId", "turn");
CREATE INDEX "ToolCall_runId_step_idx" ON "ToolCall"("runId", "step");

CREATE TABLE "Checkpoint" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "stage" INTEGER NOT NULL,
    "step" INTEGER NOT NULL,
    "path" TEXT NOT NULL,
    "sizeBytes" INTEGER,
    "metadata" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Checkpoint_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Checkpoint_runId_stage_step_key" ON "Checkpoint"("runId", "stage", "step");

CREATE TABLE "Dataset" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "source" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "metadata" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Dataset_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Dataset_name_version_key" ON "Dataset"("name", "version");

CREATE TABLE "Problem" (
    "id" TEXT NOT NULL,
    "datasetId" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "split" TEXT NOT NULL DEFAULT 'train',
    "externalId" TEXT,
    "question" TEXT NOT NULL,
    "answer" TEXT NOT NULL,
    "metadata" TEXT,

    CONSTRAINT "Problem_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Problem_datasetId_index_key" ON "Problem"("datasetId", "index");
CREATE INDEX "Problem_datasetId_split_index_idx" ON "Problem"("datasetId", "split", "index");

CREATE TABLE "EvalResult" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "step" INTEGER NOT NULL,
    "benchmark" TEXT NOT NULL,
    "k" INTEGER NOT NULL,
    "pass1" DOUBLE PRECISION NOT NULL,
    "passK" DOUBLE PRECISION,
    "meanLength" DOUBLE PRECISION,
    "toolCalls" DOUBLE PRECISION,
    "toolErrors" DOUBLE PRECISION,
    "details" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EvalResult_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "EvalResult_runId_benchmark_step_idx" ON "EvalResult"("runId", "benchmark", "step");

CREATE TABLE "ShareLink" (
    "id" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "label" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ShareLink_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "ShareLink_tokenHash_key" ON "ShareLink"("tokenHash");
