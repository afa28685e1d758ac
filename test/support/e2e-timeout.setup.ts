// e2e tests start apps, processes and git; on a busy 2-core machine 5 s is not enough for some of
// them. `testTimeout` in a project's config is ignored by Jest (it is a global option), so the
// e2e project sets it here. A test that needs longer still says so itself.
jest.setTimeout(30_000);
