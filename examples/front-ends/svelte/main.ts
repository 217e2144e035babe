import { mount } from 'svelte';
import Composer from './Composer.svelte';
import '../shared/style.css';

mount(Composer, { target: document.getElementById('app')! });
