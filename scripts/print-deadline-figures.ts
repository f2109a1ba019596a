/**
 * Prints the callback-versus-poll table of docs/deadlines.md from the synthesized state machines
 * of the project's worker module (package.json's `"tessera": { "workers": ... }`).
 * Run: `npx tsx scripts/print-deadline-figures.ts`.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import {
  callbackSubtaskCost,
  callbackTimeoutCost,
  deadlineFigures,
  figuresTable,
  batchOverheadEvents,
  historyOf,
  subtaskIteration,
} from '../bench/deadline-figures';
import { TesseraStack } from '../lib/infra/stack';
import { batchStateMachineDefinition, stateMachineDefinition } from '../lib/infra/synthesized';
import { workerModuleFromPackageJson } from '../lib/workers/worker-module';

const workers = workerModuleFromPackageJson();
if (!workers) throw new Error('package.json names no worker module ("tessera": { "workers": PATH })');

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const template = Template.fromStack(new TesseraStack(app, 'Figures', { fanOut: { workers: { entry: workers } } }));
const asl = stateMachineDefinition(template.toJSON());
const batchAsl = batchStateMachineDefinition(template.toJSON());

const iteration = subtaskIteration(batchAsl);
for (const [label, cost] of [
  ['callback, finished', callbackSubtaskCost(iteration)],
  ['callback, timed out', callbackTimeoutCost(iteration)],
] as const) {
  console.log(`${label}: ${cost.path.join(' → ')} (${cost.transitions} transitions, ${cost.historyEvents} events + 2 for the iteration)`);
}
console.log(`batch overhead (one child execution, outside iterations): ${batchOverheadEvents(batchAsl)} history events`);
console.log(`history per run, round, batch and child: ${JSON.stringify(historyOf(asl, batchAsl))}\n`);
console.log(figuresTable(deadlineFigures(batchAsl, [10, 60, 300], [1, 5])));
