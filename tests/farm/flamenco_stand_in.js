// Runs collide_farm/flamenco/collide_scan.js's compileJob under Node with a stand-in for
// Flamenco's job-compiler globals (author, path, print) and prints the authored job as
// JSON: node flamenco_stand_in.js JOB_TYPE_FILE SETTINGS_JSON
"use strict";
const fs = require("fs");
const nodePath = require("path");
const vm = require("vm");

const [script, settingsText] = process.argv.slice(2);
const author = {
    Task(name, type) {
        return {
            name, type, commands: [], dependencies: [],
            addCommand(command) { this.commands.push(command); },
            addDependency(task) { this.dependencies.push(task.name); },
        };
    },
    Command(name, parameters) { return { name, parameters }; },
};
const tasks = [];
const job = { settings: JSON.parse(settingsText), addTask(task) { tasks.push(task); } };
const context = vm.createContext({ author, path: nodePath.posix, print() {} });
vm.runInContext(fs.readFileSync(script, "utf8") + "\nthis.JOB_TYPE = JOB_TYPE;", context);
try {
    context.compileJob(job);
} catch (error) {
    console.log(JSON.stringify({ error: String(error) }));
    process.exit(0);
}
const settingKeys = context.JOB_TYPE.settings.map((setting) => setting.key);
console.log(JSON.stringify({ settingKeys, tasks: tasks.map(({ name, type, commands, dependencies }) =>
    ({ name, type, commands, dependencies })) }));
