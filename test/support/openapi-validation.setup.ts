import { assertNoResponseViolations } from './openapi-validator';

// Every e2e test fails when a response it caused breaks the OpenAPI document (see createTestApp).
afterEach(() => assertNoResponseViolations());
afterAll(() => assertNoResponseViolations());
