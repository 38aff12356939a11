-- A recipe version never changes once written (make a new version with parentId instead), and a run's frozen
-- recipe, seed and code version never change either: that is what makes a run reproducible.
CREATE FUNCTION toolsmith_recipe_immutable() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'recipe versions are immutable: create a new version instead';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER "Recipe_immutable" BEFORE UPDATE OF "name", "version", "parentId", "spec" ON "Recipe"
    FOR EACH ROW EXECUTE FUNCTION toolsmith_recipe_immutable();

CREATE FUNCTION toolsmith_run_frozen() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'a run''s recipe, seed and code version are frozen when it is created';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER "Run_frozen" BEFORE UPDATE OF "recipeSpec", "seed", "codeVersion" ON "Run"
    FOR EACH ROW EXECUTE FUNCTION toolsmith_run_frozen();
