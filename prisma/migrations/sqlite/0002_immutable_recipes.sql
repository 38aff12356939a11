-- A recipe version never changes once written (make a new version with parentId instead), and a run's frozen
-- recipe, seed and code version never change either: that is what makes a run reproducible.
CREATE TRIGGER "Recipe_immutable" BEFORE UPDATE OF "name", "version", "parentId", "spec" ON "Recipe"
BEGIN
    SELECT RAISE(ABORT, 'recipe versions are immutable: create a new version instead');
END;

CREATE TRIGGER "Run_frozen" BEFORE UPDATE OF "recipeSpec", "seed", "codeVersion" ON "Run"
BEGIN
    SELECT RAISE(ABORT, 'a run''s recipe, seed and code version are frozen when it is created');
END;
