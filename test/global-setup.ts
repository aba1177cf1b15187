// Placeholder: the two-machine world is set up here once per test run.
export default async function setup(): Promise<void> {}
